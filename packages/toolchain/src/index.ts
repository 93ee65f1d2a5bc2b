export { readPtxManifest, PtxParseError } from './ptx-manifest.js'
export type { ReadPtxManifestOptions } from './ptx-manifest.js'
export { demangleNames } from './demangle.js'
