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

s('affine accesses give an unchecked variant (in a loop with a bound the host computes too); an atomic or a module variable keeps only the checked one', () => {
  assert.equal([...kernels.values()].filter((k) => k.unchecked).map((k) => k.name).sort(), ['matmul_tile16', 'mixed_shared', 'reduce_sum_shared', 'vec_add'])
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

/** matmul_tile16's parameter block: A, B, C, M, N, K. */
const matmulParams = (A: bigint, B: bigint, C: bigint, M: number, N: number, K: number) => {
  const bytes = new Uint8Array(40)
  const dv = new DataView(bytes.buffer)
  dv.setBigUint64(0, A, true); dv.setBigUint64(8, B, true); dv.setBigUint64(16, C, true)
  dv.setInt32(24, M, true); dv.setInt32(28, N, true); dv.setInt32(32, K, true)
  return bytes
}

s('the tiled matmul: every tile the loop loads, for K the launch gives (the loop bound in shifts, computed on the host), rows and columns of 16 threads', () => {
  const k = kernels.get('matmul_tile16')!
  const sites = k.unchecked!.sites
  const trips = new Map(k.unchecked!.trips ?? [])
  // both tile loads count the loop's trips; the store after the loop does not
  assert.equal(sites.map((x) => !!x.iv), [true, true, false])
  assert.equal([...trips.keys()], [0])
  const M = 192, N = 192, K = 192
  const A = 4096n, B = A + BigInt(M * K * 4), C = B + BigInt(K * N * 4), end = Number(C) + M * N * 4
  const inside = (p: Uint8Array, grid: [number, number, number], arenaBytes = end) => accessesInside(sites, p, grid, [16, 16, 1], RESERVED_BYTES, arenaBytes, trips)
  assert.ok(inside(matmulParams(A, B, C, M, N, K), [N / 16, M / 16, 1]))
  // without the loop's bound the host proves nothing about the loads
  assert.not.ok(accessesInside(sites, matmulParams(A, B, C, M, N, K), [N / 16, M / 16, 1], [16, 16, 1], RESERVED_BYTES, end))
  // a K larger than A and B hold: B's last tiles would be read past the arena's end (K + 64 still reads inside
  // it, in C: the arena, not each allocation, is what an unchecked launch must stay in, as for vec_add)
  assert.ok(inside(matmulParams(A, B, C, M, N, K + 64), [N / 16, M / 16, 1]))
  assert.not.ok(inside(matmulParams(A, B, C, M, N, K + 256), [N / 16, M / 16, 1]))
  assert.ok(inside(matmulParams(A, B, C, M, N, K + 256), [N / 16, M / 16, 1], end + (1 << 20)))
  // B's tiles are read at rows up to K: a K of 2^27 makes (tile row)·N·4 pass 2^31 in 32 bits, so no proof
  assert.not.ok(inside(matmulParams(A, B, C, M, N, 1 << 27), [N / 16, M / 16, 1], 2 ** 40))
  // K ≤ 0: the kernel skips the loop, but the proof counts its first trip, whose addresses (row·K) lie below A
  // and the reserved page: no proof, the checked variant runs
  assert.not.ok(inside(matmulParams(A, B, C, M, N, -5), [N / 16, M / 16, 1]))
  assert.ok(inside(matmulParams(A, B, C, M, N, 0), [N / 16, M / 16, 1]), 'K = 0: the first trip reads row·0 + tx')
  // a grid with more rows than C has: the store after the loop is past the arena's end
  assert.not.ok(inside(matmulParams(A, B, C, M, N, K), [N / 16, M / 16 + 1, 1]))
})

s.run()
