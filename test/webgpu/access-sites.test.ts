// The unchecked WGSL variant (issue 25, the speed of translated kernels): emit-wgsl records each checked
// global access as an affine form (access-sites.ts), and a launch runs without checks only when the host
// proves every access of every thread inside the arena, past the reserved page, with no 32-bit term wrapping.
// The translations themselves are compared with the emulator by the kernel corpus on Dawn (where every
// in-range launch of such a kernel runs the unchecked variant); this checks which kernels get one and the
// host's decisions.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { join } from 'node:path'
import { decodeModule, parsePtx } from '@kernelpack/ptx'
import { accessesInside } from '../../packages/webgpu/src/access-sites.js'
import { translateModule } from '../../packages/webgpu/src/index.js'
import { RESERVED_BYTES } from '../../packages/webgpu/src/layout.js'
import { compilePtx, corpusConfigs } from '../helpers/ptx-cache.js'
import { repoRoot } from '../helpers/tools.js'

const config = corpusConfigs.find((c) => c.label === 'nvcc compute_80')!
const ptx = await compilePtx({ source: join(repoRoot, 'test', 'fixtures', 'webgpu', 'plumbing.cu'), config })
const kernels = translateModule(decodeModule(parsePtx(ptx), { perFunction: true }), { features: new Set(), limits: { maxComputeInvocationsPerWorkgroup: 256 } }, ptx).kernels

/** vec_add's parameter block: a, b, c (64-bit addresses), n. */
const vecAddParams = (a: bigint, b: bigint, c: bigint, n: number) => {
  const bytes = new Uint8Array(32)
  const dv = new DataView(bytes.buffer)
  dv.setBigUint64(0, a, true); dv.setBigUint64(8, b, true); dv.setBigUint64(16, c, true); dv.setInt32(24, n, true)
  return bytes
}

const s = suite('unchecked variants of translated kernels')

s('affine accesses give an unchecked variant; an access in a loop, an atomic or a module variable keeps only the checked one', () => {
  assert.equal([...kernels.values()].filter((k) => k.unchecked).map((k) => k.name).sort(), ['mixed_shared', 'reduce_sum_shared', 'vec_add'])
  const v = kernels.get('vec_add')!
  assert.is(v.unchecked!.sites.length, 3)
  assert.ok(!v.unchecked!.wgsl.includes('kp_fault_flush'), 'no fault record to keep')
  assert.match(v.unchecked!.wgsl, /fn kp_gchk\(a: u32, n: u32, line: u32\) -> u32 \{ return a; \}/)
  assert.match(v.wgsl, /kp_fault_flush\(\);/)
})

s('the host proves a launch in range only when every thread of the grid is', () => {
  const sites = kernels.get('vec_add')!.unchecked!.sites
  const n = 1 << 12, arena = 1 << 20
  const a = 4096n, b = a + 4n * BigInt(n), c = b + 4n * BigInt(n)
  const inside = (p: Uint8Array, grid: number, arenaBytes = arena) => accessesInside(sites, p, [grid, 1, 1], [256, 1, 1], RESERVED_BYTES, arenaBytes)
  assert.ok(inside(vecAddParams(a, b, c, n), n / 256))
  // one block more than the data: its threads would reach past c's end, still inside the arena
  assert.ok(inside(vecAddParams(a, b, c, n), n / 256 + 1))
  // ... but not past the arena's end
  assert.not.ok(inside(vecAddParams(a, b, c, n), n / 256 + 1, Number(c) + 4 * n))
  assert.ok(inside(vecAddParams(a, b, c, n), n / 256, Number(c) + 4 * n), 'exactly up to the end')
  assert.not.ok(inside(vecAddParams(0n, b, c, n), n / 256), 'a null pointer: the reserved page')
  assert.not.ok(inside(vecAddParams(a, b, 1n << 50n, n), n / 256), 'a wild pointer')
  // 2^32 threads: the kernel's 32-bit index (blockIdx.x * blockDim.x + threadIdx.x) wraps
  assert.not.ok(accessesInside(sites, vecAddParams(a, b, c, n), [1 << 24, 1, 1], [256, 1, 1], RESERVED_BYTES, 2 ** 40))
  assert.ok(accessesInside(sites, vecAddParams(a, b, c, n), [(1 << 23) - 1, 1, 1], [256, 1, 1], RESERVED_BYTES, 2 ** 40), 'just below 2^31 threads')
})

s.run()
