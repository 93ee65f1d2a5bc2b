// The PTX front end's interface reader, imported on demand by createModule's manifest check (module.ts): a
// page that loads WGSL translated at build time never loads the PTX parser (issue 25).
export { ptxText, readPtxInterface } from '@kernelpack/ptx'
