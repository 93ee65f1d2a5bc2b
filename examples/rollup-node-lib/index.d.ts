// Types of the built library (dist/index.js), for consumers; src/index.ts implements them.
/** Sums of `data` over windows of `2 * radius + 1` elements centred on each index (clamped at the ends). */
export declare function windowSum(data: Int32Array, radius: number): Promise<Int32Array>
/** Which backend runs the kernels ('cuda' or 'emulator') and why. */
export declare function backend(): Promise<{ name: string; reason: string }>
