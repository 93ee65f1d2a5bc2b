// The contract between the WebGPU backend (backend.ts) and the WGSL it runs (emit-wgsl, or the hand-written
// kernels of the tests): binding numbers, the names of the pipeline-overridable constants, the launch-info
// uniform, and the device address map. README.md ("Pointer model") explains the choices; emit-wgsl must
// declare exactly these names.
//
//   @group(0) @binding(0) var<storage, read_write> kp_mem: array<u32>;  // or array<atomic<u32>> (see `memory`)
//   @group(0) @binding(1) var<uniform> kp_params: array<vec4<u32>, N>;  // the kernel's .param block, PTX layout
//   @group(0) @binding(2) var<uniform> kp_launch: KpLaunch;             // per dispatch (dynamic offset)
//   @group(0) @binding(3) var<storage, read_write> kp_fault: array<atomic<u32>, 4>;  // the fault record
//   struct KpLaunch { nctaid: vec3<u32>, kernel_id: u32, ctaid_base: vec3<u32>, pad: u32 }
//     (ctaid_base.y and .z are always 0, grids being split in x only: wgsl-lib.ts kp_nc reads .y as a zero that
//     a shader compiler cannot fold)
//   override kp_ntid_x: u32; override kp_ntid_y: u32; override kp_ntid_z: u32;   // the CUDA block
//   override kp_dyn_shared_words: u32;                                            // dynamic .shared, in u32 words
//   override kp_dyn_shared_bytes: u32;                                            // the same in bytes (%dynamic_smem_size)
//   override kp_var_<i>: u32;                                                     // address of module variable i
//   override kp_split: bool;                                                      // the grid is dispatched in parts
//   @compute @workgroup_size(kp_ntid_x, kp_ntid_y, kp_ntid_z)
//   fn <entryPoint>(@builtin(local_invocation_id) tid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>)
//     // %ctaid = wid (+ kp_launch.ctaid_base when kp_split), %nctaid = kp_launch.nctaid, %ntid = (kp_ntid_x, kp_ntid_y, kp_ntid_z)

export const BINDING_MEMORY = 0
export const BINDING_PARAMS = 1
export const BINDING_LAUNCH = 2
export const BINDING_FAULT = 3

/** Bytes of one KpLaunch record: nctaid (12) + kernel_id (4) + ctaid_base (12) + pad (4). */
export const LAUNCH_RECORD_BYTES = 32
/** Distance between the KpLaunch records of the dispatches of one launch: minUniformBufferOffsetAlignment
 *  may be up to 256 (WebGPU spec, "Limits"), and dynamic offsets must be multiples of it. */
export const LAUNCH_RECORD_STRIDE = 256

export const OVERRIDE_NTID = ['kp_ntid_x', 'kp_ntid_y', 'kp_ntid_z'] as const
export const OVERRIDE_DYN_SHARED_WORDS = 'kp_dyn_shared_words'
/** The exact dynamic shared size in bytes (%dynamic_smem_size), for kernels that read it. */
export const OVERRIDE_DYN_SHARED_BYTES = 'kp_dyn_shared_bytes'
/** A coarsened kernel (README.md, "Block sizes above …"): CUDA threads per invocation, and invocations. */
export const OVERRIDE_COARSE_K = 'kp_k'
export const OVERRIDE_COARSE_WG = 'kp_wg'
/** The grid runs as several dispatches (grid.x over maxComputeWorkgroupsPerDimension, or the slices of a
 *  stoppable launch), each with its ctaid_base; false for one dispatch, where the shader then never reads
 *  ctaid_base (that uniform read, behind a dynamic offset, was 12 % of a vector add on SwiftShader). */
export const OVERRIDE_SPLIT = 'kp_split'
/** fma.rn.f32 through the exact sequence (wgsl-lib.ts kp_fma_rn) rather than WGSL's fma(): true where the
 *  device's fma() is not fused (SwiftShader's rounds the product first), as fma-probe.ts finds once per device. */
export const OVERRIDE_FMA_EXACT = 'kp_fma_exact'
/** The phase of a cooperative kernel split at its grid syncs (emit-kernel.ts writePhases): 0, 1, … */
export const OVERRIDE_PHASE = 'kp_phase'
/** Name of the override constant holding the device address (u32) of module variable `index`. */
export function overrideVariable(index: number): string {
  return `kp_var_${index}`
}

// Device address map (all addresses below 2^32, so the high word of every valid 64-bit pointer is zero).
//   [0, RESERVED_BYTES)        never allocated: a null pointer (or a small offset from it) is not an
//                              allocation, and a checked access that faults is redirected here
//   [RESERVED_BYTES, ARENA_ADDRESS_LIMIT)   global memory: byte offsets into the one arena buffer kp_mem
//   [SHARED_WINDOW, +WINDOW_BYTES)          generic addresses of .shared (cvta.shared adds SHARED_WINDOW)
//   [LOCAL_WINDOW, +WINDOW_BYTES)           generic addresses of .local (per thread, like CUDA's window)
export const RESERVED_BYTES = 4096
/** The fault record kp_fault, a buffer of its own (always atomic, whatever kp_mem's declaration), in u32
 *  words: [0] kernel_id + 1 of the first faulting kernel (0 = none), [1] PTX line, [2] address (arena
 *  addresses are 32-bit: ARENA_ADDRESS_LIMIT), [3] what happened (FAULT_KIND). A kernel claims word 0 with atomicCompareExchangeWeak (retrying while it reads
 *  0), so the first fault wins and the record is never a mix of two; the backend reads it at every
 *  synchronize and download and clears it. */
export const FAULT_RECORD_BYTES = 16
/** Device printf (emit-printf.ts) shares the fault record's buffer: word 4 counts the words kernels asked for
 *  since the backend last read it, records follow from word 5, PRINTF_BYTES of them at most (CUDA's default
 *  printf FIFO is 1 MiB too; records past it are dropped, as there). A record is PRINTF_HEADER_WORDS words —
 *  its length in words, call site, launch number, block (linear), thread (linear), barriers and warp
 *  collectives the thread had passed, printfs it had made — then the argument buffer's words. */
export const PRINTF_BYTES = 1 << 20
export const PRINTF_HEADER_WORDS = 8
/** The fault record's buffer: the record, the printf counter, the printf records. */
export const FAULT_BUFFER_BYTES = FAULT_RECORD_BYTES + 4 + PRINTF_BYTES
/** Word [3] of the fault record: an invalid memory access at word [2], a `trap`, a failed device `assert()`
 *  (a call to __assertfail; the emulator's fault kinds), an mbarrier wait or a wait on shared memory that cannot
 *  complete in predicated code (emit-mbarrier.ts, spin-wait.ts), a block whose threads all wait (rounds.ts). */
export const FAULT_KIND = { access: 0, trap: 1, assert: 2, mbarrier: 3, spin: 4, deadlock: 5 } as const
export const SHARED_WINDOW = 0xf000_0000
export const LOCAL_WINDOW = 0xf800_0000
export const WINDOW_BYTES = 0x0800_0000
/** Global memory ends where the generic windows start (3.75 GiB), whatever the adapter would allow. */
export const ARENA_ADDRESS_LIMIT = SHARED_WINDOW

/** Allocation granule: CUDA's cudaMalloc guarantees 256-byte alignment, and storage offsets must be
 *  multiples of minStorageBufferOffsetAlignment (≤ 256). */
export const ALLOC_ALIGN = 256

// WebGPU enum bit values (WebGPU spec, GPUBufferUsage / GPUMapMode / GPUShaderStage), spelled out so the
// backend does not depend on the globals a browser has and Dawn in Node only installs on request.
export const USAGE_MAP_READ = 0x0001
export const USAGE_COPY_SRC = 0x0004
export const USAGE_COPY_DST = 0x0008
export const USAGE_UNIFORM = 0x0040
export const USAGE_STORAGE = 0x0080
export const MAP_READ = 0x0001
export const STAGE_COMPUTE = 0x4
