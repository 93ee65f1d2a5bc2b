// Ambient types for `.cu` imports without a generated .d.ts (add "unplugin-cuda/types" to tsconfig types).
declare module '*.cu' {
  const kernels: Record<string, (...args: any[]) => any>
  export default kernels
}
