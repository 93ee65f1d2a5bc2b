// Hand-written WGSL for the kernels the WebGPU benches time (issue 25: "a comparison with hand-written WGSL"):
// vector add, the 16×16-tiled matmul and the shared-memory reduction of test/fixtures/webgpu/plumbing.cu (and the
// division and square root of bench/kernels/exact.cu; its f64 vector add gets the f32 one), written the way a WebGPU
// developer writes them (one storage buffer per array, a uniform for the sizes, workgroup tiles, the same
// order of operations as the CUDA source), and run on a GPUDevice with nothing of kernelpack in between. The
// benches run them beside the WGSL emit-wgsl translates from that kernel's PTX, on the same device, A/B
// interleaved: the ratio is the translator's cost (the arena, 64-bit pointer arithmetic, checked accesses).
// No Node built-ins: it runs in the bench's chromium page and in Node on Dawn.

/** An elementwise kernel over two input arrays: c[i] = `expr` (of a[i] and b[i]). */
const elementwise = (expr: string) => `
struct Sizes { n: u32 }
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@group(0) @binding(3) var<uniform> sizes: Sizes;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let i = gid.x;
  if (i < sizes.n) { c[i] = ${expr}; }
}
`

export const handVecAddWgsl = elementwise('a[i] + b[i]')

export const handMatmulWgsl = `
struct Sizes { m: u32, n: u32, k: u32 }
@group(0) @binding(0) var<storage, read> A: array<f32>;
@group(0) @binding(1) var<storage, read> B: array<f32>;
@group(0) @binding(2) var<storage, read_write> C: array<f32>;
@group(0) @binding(3) var<uniform> sizes: Sizes;
const TILE = 16u;
var<workgroup> As: array<array<f32, 16>, 16>;
var<workgroup> Bs: array<array<f32, 16>, 16>;

@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
  let row = wid.y * TILE + lid.y;
  let col = wid.x * TILE + lid.x;
  var acc = 0.0;
  let tiles = (sizes.k + TILE - 1u) / TILE;
  for (var t = 0u; t < tiles; t++) {
    let ac = t * TILE + lid.x;
    let br = t * TILE + lid.y;
    As[lid.y][lid.x] = select(0.0, A[min(row * sizes.k + ac, arrayLength(&A) - 1u)], row < sizes.m && ac < sizes.k);
    Bs[lid.y][lid.x] = select(0.0, B[min(br * sizes.n + col, arrayLength(&B) - 1u)], br < sizes.k && col < sizes.n);
    workgroupBarrier();
    for (var k = 0u; k < TILE; k++) { acc = acc + As[lid.y][k] * Bs[k][lid.x]; }
    workgroupBarrier();
  }
  if (row < sizes.m && col < sizes.n) { C[row * sizes.n + col] = acc; }
}
`

export const handDivSqrtWgsl = elementwise('sqrt(a[i]) / b[i]')

export const handReduceWgsl = `
struct Sizes { n: u32 }
@group(0) @binding(0) var<storage, read> input: array<f32>;
@group(0) @binding(1) var<storage, read_write> sums: array<f32>;
@group(0) @binding(2) var<uniform> sizes: Sizes;
var<workgroup> s: array<f32, 256>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
  let t = lid.x;
  let i = wid.x * 512u + t;
  var v = 0.0;
  if (i < sizes.n) { v = input[i]; }
  if (i + 256u < sizes.n) { v = v + input[i + 256u]; }
  s[t] = v;
  workgroupBarrier();
  for (var st = 128u; st > 0u; st = st >> 1u) {
    if (t < st) { s[t] = s[t] + s[t + st]; }
    workgroupBarrier();
  }
  if (t == 0u) { sums[wid.x] = s[0]; }
}
`

const STORAGE = 0x80, COPY_DST = 0x8, COPY_SRC = 0x4, UNIFORM = 0x40, MAP_READ = 0x1

/** One hand-written kernel set up on `device` with its inputs: `run()` launches it and waits until the queue
 *  is done (what a synchronize does); `read()` copies the output back. */
export interface HandKernel { run(): Promise<void>; read(): Promise<Float32Array>; destroy(): void }

export async function setupHand(device: GPUDevice, which: 'vecAdd' | 'matmul' | 'reduce' | 'divSqrt', inputs: { a: Float32Array; b?: Float32Array; outLength: number; sizes: number[]; groups: [number, number, number] }): Promise<HandKernel> {
  const buffer = (data: Float32Array | Uint32Array | number, usage: number) => {
    const size = typeof data === 'number' ? data : Math.max(16, data.byteLength)
    const b = device.createBuffer({ size: Math.ceil(size / 4) * 4, usage: usage | COPY_DST })
    if (typeof data !== 'number') device.queue.writeBuffer(b, 0, data as Float32Array<ArrayBuffer>)
    return b
  }
  const a = buffer(inputs.a, STORAGE), b = inputs.b ? buffer(inputs.b, STORAGE) : undefined
  const c = buffer(inputs.outLength * 4, STORAGE | COPY_SRC)
  const sizes = buffer(Uint32Array.from([...inputs.sizes, 0, 0, 0, 0].slice(0, 4)), UNIFORM)
  const module = device.createShaderModule({ code: { vecAdd: handVecAddWgsl, matmul: handMatmulWgsl, reduce: handReduceWgsl, divSqrt: handDivSqrtWgsl }[which] })
  const pipeline = await device.createComputePipelineAsync({ layout: 'auto', compute: { module, entryPoint: 'main' } })
  const group = device.createBindGroup({
    layout: pipeline.getBindGroupLayout(0),
    entries: (b ? [a, b, c, sizes] : [a, c, sizes]).map((buf, binding) => ({ binding, resource: { buffer: buf } })),
  })
  return {
    async run() {
      const enc = device.createCommandEncoder()
      const pass = enc.beginComputePass()
      pass.setPipeline(pipeline)
      pass.setBindGroup(0, group)
      pass.dispatchWorkgroups(...inputs.groups)
      pass.end()
      device.queue.submit([enc.finish()])
      await device.queue.onSubmittedWorkDone()
    },
    async read() {
      const staging = device.createBuffer({ size: c.size, usage: MAP_READ | COPY_DST })
      const enc = device.createCommandEncoder()
      enc.copyBufferToBuffer(c, 0, staging, 0, c.size)
      device.queue.submit([enc.finish()])
      await staging.mapAsync(MAP_READ)
      const out = new Float32Array(staging.getMappedRange().slice(0, inputs.outLength * 4))
      staging.unmap()
      staging.destroy()
      return out
    },
    destroy() { for (const x of [a, b, c, sizes]) x?.destroy() },
  }
}
