// Device printf's formatting and GPU order live in @kernelpack/ptx (printf.ts), shared with the WebGPU backend.
export { defaultPrint, formatPrintf, printfResult, PrintfOrder } from '@kernelpack/ptx'
