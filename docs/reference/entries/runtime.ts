/** @module @kernelpack/runtime */
export * from '@kernelpack/runtime'
