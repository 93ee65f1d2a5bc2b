export * from './types.js'
export type * from './manifest.js'
