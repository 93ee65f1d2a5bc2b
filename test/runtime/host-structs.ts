// Runtime schemas of the structs in test/fixtures/runtime/structs-host.c (twins of shared/reference/cu/structs.cu
// and test/fixtures/runtime/abi.cu), the values the C program fills in, and a helper that compiles and runs it.
import { execFileSync } from 'node:child_process'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { t, type DataType } from '@kernelpack/runtime'
import { fixturesDir, tempDir, tool } from '../helpers/tools.js'

const Mixed = t.struct({ tag: t.u16, id: t.u64, weight: t.f64, code: t.array(t.i8, 3) })
const Arrays = t.struct({ dims: t.array(t.i32, 4), scale: t.array(t.f32, 3), flags: t.array(t.u8, 5) })
const Nested = t.struct({ m: Mixed, a: Arrays, enabled: t.bool })
const Aligned16 = t.struct({ x: t.f32, y: t.f32, z: t.f32, w: t.i32 }, { align: 16 })
const Bits = t.union({ f: t.f32, u: t.u32, b: t.array(t.u8, 4) })
const Params = t.struct({ src: t.ptr, dst: t.ptr, n: t.i32, mask: Bits, origin: Aligned16 })
const Inner = t.struct({ a: t.u8, b: t.f64 })
const Outer = t.struct({ in: t.array(Inner, 2), s: t.i16, v: t.array(t.f32, 3), last: Inner })

export const schemas: Record<string, DataType> = {
  Mixed, Arrays, Nested, Aligned16, Bits, Params, Inner, Outer,
  S1: t.struct({ a: t.i8, b: t.i32, c: t.i8 }),
  S2: t.struct({ a: t.i16, b: t.i8 }),
  S3: t.struct({ c: t.i8, l: t.i64, d: t.i8 }),
  S4: t.struct({ f: t.array(t.f32, 3), d: t.f64 }),
  S5: t.struct({ a: t.i8, in: t.struct({ b: t.i16, c: t.i8 }), d: t.i32 }),
  S6: t.struct({ a: t.i8 }, { align: 32 }),
  S7: t.struct({ flags: t.array(t.u8, 5), x: t.u64, t: t.u8 }),
  S8: t.struct({ i: t.i128, c: t.i8 }),
}

const f = Math.fround
const mixed = { tag: 0xbeef, id: 0x0123456789abcdefn, weight: -2.5, code: [107, 112, -7] } // 'k', 'p', -7
const arrays = {
  dims: [0, 1, 2, 3].map((i) => (i - 2) * 1000003),
  scale: [0, 1, 2].map((i) => f(f(0.25 * (i + 1)) - f(0.1))),
  flags: [0, 1, 2, 3, 4].map((i) => 250 + i),
}
const aligned = { x: 1, y: -2, z: 3.5, w: -4 }

/** The same values structs-host.c fills in. */
export const values: Record<string, unknown> = {
  Mixed: mixed,
  Arrays: arrays,
  Nested: { m: mixed, a: arrays, enabled: true },
  Aligned16: aligned,
  Params: { src: 0x7f0000001000n, dst: 0x7f0000002000n, n: 1000, mask: { u: 0xffffff00 }, origin: aligned },
  Outer: { in: [{ a: 7, b: 0.5 }, { a: 200, b: -1e300 }], s: -12345, v: [1, 2, 3], last: { a: 1, b: 3.14159 } },
}

export interface HostFacts {
  layouts: Record<string, { size: number; align: number; offsets: Record<string, number> }>
  values: Record<string, string>
}

/** Compiles structs-host.c with gcc and returns what it prints. */
export function readHostFacts(): HostFacts {
  const dir = tempDir('kp-structs-host-')
  process.on('exit', () => rmSync(dir, { recursive: true, force: true }))
  const exe = join(dir, 'structs-host')
  execFileSync(tool('gcc'), ['-O0', '-Wall', '-o', exe, join(fixturesDir, 'runtime', 'structs-host.c')], { stdio: 'pipe' })
  return JSON.parse(execFileSync(exe, { encoding: 'utf8' })) as HostFacts
}

export const hex = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex')
