// `@kernelpack/webgpu/backend`: the backend alone, what @kernelpack/runtime loads. It runs WGSL translated at
// build time without the translator or the PTX front end, which it imports only for a PTX image (issue 25);
// the package entry also exports the translator, so a bundle importing it holds emit-wgsl.
export { createWebGpuBackend } from './backend.js'
export type { WebGpuBackend, WebGpuBackendOptions, WebGpuModule } from './backend.js'
