// Errors of the runtime. CudaError carries the CUresult with the driver's own name and description
// (cuGetErrorName / cuGetErrorString); the small fallback table covers results seen before those two are
// resolved (values from cuda.h, CUDA 13.0).

const fallbackNames: Record<number, string> = {
  0: 'CUDA_SUCCESS', 1: 'CUDA_ERROR_INVALID_VALUE', 2: 'CUDA_ERROR_OUT_OF_MEMORY', 3: 'CUDA_ERROR_NOT_INITIALIZED',
  4: 'CUDA_ERROR_DEINITIALIZED', 34: 'CUDA_ERROR_STUB_LIBRARY', 36: 'CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER',
  100: 'CUDA_ERROR_NO_DEVICE', 101: 'CUDA_ERROR_INVALID_DEVICE', 200: 'CUDA_ERROR_INVALID_IMAGE',
  201: 'CUDA_ERROR_INVALID_CONTEXT', 209: 'CUDA_ERROR_NO_BINARY_FOR_GPU', 218: 'CUDA_ERROR_INVALID_PTX',
  221: 'CUDA_ERROR_JIT_COMPILER_NOT_FOUND', 222: 'CUDA_ERROR_UNSUPPORTED_PTX_VERSION', 400: 'CUDA_ERROR_INVALID_HANDLE',
  500: 'CUDA_ERROR_NOT_FOUND', 700: 'CUDA_ERROR_ILLEGAL_ADDRESS', 701: 'CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES',
  719: 'CUDA_ERROR_LAUNCH_FAILED', 803: 'CUDA_ERROR_SYSTEM_DRIVER_MISMATCH', 999: 'CUDA_ERROR_UNKNOWN',
}

export function fallbackErrorName(code: number): string {
  return fallbackNames[code] ?? `CUresult ${code}`
}

/** A CUDA driver call returned an error. `message` is `<call>: <codeName> (<code>): <description>[; more]`. */
export class CudaError extends Error {
  override name = 'CudaError'
  readonly code: number
  readonly codeName: string
  readonly call: string
  readonly description: string
  constructor(call: string, code: number, codeName: string, description: string, more?: string) {
    super(`${call} failed: ${codeName} (${code}): ${description}${more ? `\n${more}` : ''}`)
    this.call = call
    this.code = code
    this.codeName = codeName
    this.description = description
  }
}

/** No usable NVIDIA driver (libcuda could not be loaded, or it reports no device). */
export class NoDriverError extends Error {
  override name = 'NoDriverError'
  /** One line without the advice, for `auto`'s reason. */
  readonly summary: string
  constructor(message: string, summary?: string) {
    super(message)
    this.summary = summary ?? message
  }
}
