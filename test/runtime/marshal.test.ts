// The parameter block layout against ptxas (EIATTR_KPARAM_INFO offsets and sizes in the cubin built from the
// same PTX: the driver's own layout of the kernel parameter buffer), and packing rules without the FFI.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import type { ParamInfo } from '@kernelpack/offload'
import { readPtxManifest } from '@kernelpack/toolchain'
import fc from 'fast-check'
import { createPacker, createPackTarget, layoutParams, packParams, slice, t } from '@kernelpack/runtime'
import { fixturesDir, referencePtxDir, tempDir, tool } from '../helpers/tools.js'
import { readKernelParams } from '../toolchain/cubin.js'
import { hex } from './host-structs.js'

const run = promisify(execFile)
const work = tempDir('kp-marshal-')
// structs.cu and scalars.cu: reference PTX (nvcc 13.0); abi.cu: PTX and cubin built here.
const sources: Record<string, string> = {
  structs: join(referencePtxDir, 'structs.sm_90.ptx'),
  scalars: join(referencePtxDir, 'scalars.sm_90.ptx'),
}
await run(tool('nvcc'), ['-ptx', '-arch=sm_90', join(fixturesDir, 'runtime', 'abi.cu'), '-o', join(work, 'abi.ptx')])
sources.abi = join(work, 'abi.ptx')
const cases = await Promise.all(Object.entries(sources).map(async ([name, ptxPath]) => {
  const cubin = join(work, `${name}.cubin`)
  await run(tool('nvcc'), ['-cubin', '-arch=sm_90', ptxPath, '-o', cubin])
  return { name, manifest: await readPtxManifest(readFileSync(ptxPath, 'utf8'), { demangle: false }), cubin: new Uint8Array(readFileSync(cubin)) }
}))

// ---
const Layout = suite('layoutParams')

for (const c of cases) {
  Layout(`${c.name}: every kernel's parameter offsets and sizes equal ptxas's EIATTR_KPARAM_INFO`, () => {
    assert.ok(c.manifest.kernels.length > 0)
    for (const k of c.manifest.kernels) {
      const kp = readKernelParams(c.cubin, k.name)
      assert.ok(kp, `${k.name}: KPARAM_INFO present`)
      const l = layoutParams(k.params)
      assert.equal(l.offsets, kp!.map((p) => p.offset), `${k.name} offsets`)
      assert.equal(l.sizes, kp!.map((p) => p.size), `${k.name} sizes`)
    }
  })
}

Layout('the block size covers the last parameter, rounded up to 8', () => {
  const p = (type: string, size: number, align = size): ParamInfo => ({ type, size, align })
  assert.equal(layoutParams([p('u8', 1), p('u64', 8), p('u16', 2)]), { size: 24, offsets: [0, 8, 16], sizes: [1, 8, 2] })
  assert.equal(layoutParams([]), { size: 8, offsets: [], sizes: [] })
})

Layout.run()

// ---
const Pack = suite('packParams')

const P = (type: string, size: number, align = size, extra: Partial<ParamInfo> = {}): ParamInfo => ({ type, size, align, ...extra })

Pack('scalars wrap the signed range into .u params as C does, f32 rounds, bigints and safe numbers for 64-bit', () => {
  const r = packParams('k', [P('u8', 1), P('u16', 2), P('u32', 4), P('f32', 4), P('u64', 8), P('u64', 8), P('s64', 8)], [-1, -2, -3, 0.1, 2 ** 53 - 1, -5, -6n])
  assert.is(hex(r.bytes), 'ff00feff' + 'fdffffff' + 'cdcccc3d' + '00000000' + 'ffffffffffff1f00' + 'fbffffffffffffff' + 'faffffffffffffff')
})

Pack('.s8/.s16/.s32 take only the signed range', () => {
  assert.is(hex(packParams('k', [P('s8', 1), P('s16', 2), P('s32', 4)], [-128, -32768, -2147483648]).bytes), '80000080' + '00000080')
  assert.throws(() => packParams('k', [P('s8', 1)], [128]), /out of range \[-128, 127\]/)
  assert.throws(() => packParams('k', [P('s32', 4)], [2 ** 31]), /out of range \[-2147483648, 2147483647\]/)
})

Pack('slices expand to (pointer, length); a zero-sized value takes no parameter', () => {
  const r = packParams('k', [P('u64', 8), P('u32', 4), P('u64', 8)], [slice({ address: 0x1000n }, 7), t.struct({}).of({}), null])
  assert.is(hex(r.bytes), '0010000000000000' + '07000000' + '00000000' + '0000000000000000')
})

Pack('f16 / bf16 PTX params take numbers', () => {
  const r = packParams('k', [P('f16', 2), P('bf16', 2)], [1.5, -3.5])
  assert.is(hex(r.bytes), '003e60c0' + '00000000')
})

Pack('errors name the kernel, the parameter and the PTX type', () => {
  assert.throws(() => packParams('k(int*)', [P('u64', 8, 8, { name: 'k_param_0', pointer: true })], [{}]),
    /^kernel k\(int\*\): parameter 0 \(k_param_0\) expects a pointer: DeviceBuffer or device address \(PTX \.param \.u64\), got an object \(no keys\)$/)
  assert.throws(() => packParams('k', [P('u64', 8)], [2 ** 60]), /not a safe integer: pass a bigint/)
  assert.throws(() => packParams('k', [P('s64', 8)], [2n ** 63n]), /out of range/)
  assert.throws(() => packParams('k', [P('u32', 4)], [1, 2]), /expects 1 argument \(PTX parameters: \.u32\), got 2/)
  assert.throws(() => packParams('k', [P('b8', 16, 16, { count: 16 })], [2n ** 128n]), /out of the 128-bit range/)
  assert.throws(() => packParams('k', [P('u32', 4)], [slice({ address: 1n }, 2)]), /expects 1 argument .*got 1 \(2 after expanding slices/)
  assert.throws(() => packParams('k', [P('f16', 2), P('u64', 8)], [slice({ address: 1n }, 2)]), /^kernel k: parameter 0 expects f16 .*got the pointer of a slice \(a slice pointer needs a 64-bit parameter\)$/)
})

Pack.run()

// ---
const Packer = suite('createPacker')

// The launch path packs through code generated per kernel (new Function) or, where that is refused (CSP), a
// loop over the parameters; both inline the common cases before the parameter's full check. Every argument
// list must give the same bytes, or the same TypeError, through all three entry points.
type Outcome = { bytes: string } | { error: string }
function outcome(f: (target: ReturnType<typeof createPackTarget>) => boolean | void, size: number): Outcome {
  const bytes = new Uint8Array(size).fill(0xee)
  try {
    const done = f(createPackTarget(bytes))
    return done === false ? { error: 'needs expanding' } : { bytes: hex(bytes) }
  } catch (err) {
    assert.instance(err, TypeError)
    return { error: (err as Error).message }
  }
}

const scalarParams = [P('u64', 8, 8, { pointer: true }), P('u64', 8), P('s64', 8), P('b64', 8), P('u32', 4), P('s32', 4), P('b32', 4), P('u16', 2), P('s8', 1),
  P('f32', 4), P('f64', 8), P('f16', 2)]
const anyArg = fc.oneof(
  fc.integer({ min: -(2 ** 33), max: 2 ** 33 }), fc.double(), fc.constantFrom(0, -0, 2 ** 31, -(2 ** 31) - 1, 2 ** 32 - 1, 2 ** 32, 2 ** 53, NaN, Infinity, 0.5),
  fc.bigInt({ min: -(2n ** 65n), max: 2n ** 65n }), fc.constantFrom(2n ** 63n, 2n ** 64n, 2n ** 64n - 1n, -(2n ** 63n), -(2n ** 63n) - 1n),
  fc.constant(null), fc.constant(undefined), fc.boolean(), fc.string({ maxLength: 3 }),
  fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }).map((address) => ({ address })), fc.constant({ address: 5 }), fc.constant({}),
  fc.constant(new Uint8Array(8)), fc.constant(slice({ address: 0x1000n }, 3)),
)

Packer('generated, loop fallback and packFixed give the same bytes or the same TypeError for any arguments', () => {
  fc.assert(fc.property(
    fc.array(fc.constantFrom(...scalarParams), { minLength: 1, maxLength: 6 }),
    fc.array(anyArg, { minLength: 0, maxLength: 7 }),
    (params, args) => {
      const gen = createPacker('k', params)
      const loop = createPacker('k', params, { generate: false })
      assert.ok(gen.packFixed, 'code generation is available here')
      assert.is(loop.packFixed, undefined)
      const size = gen.layout.size
      const a = outcome((tg) => gen.pack(args, tg), size)
      assert.equal(outcome((tg) => loop.pack(args, tg), size), a)
      if (args.length === params.length) {
        const fixed = outcome((tg) => gen.packFixed!(tg, ...args), size)
        // packFixed declines a slice (the caller repacks through pack); otherwise it agrees with pack
        if ('error' in fixed && fixed.error === 'needs expanding') assert.ok(args.some((x) => typeof x === 'object' && x !== null && 'buffer' in x), 'declined only for a slice')
        else assert.equal(fixed, a)
      }
    },
  ), { numRuns: 3000, seed: 20261121 })
})

Packer('a DeviceBuffer-like address and in-range bigints take the inline path; out-of-range ones still fail', () => {
  const params = [P('u64', 8, 8, { pointer: true }), P('u64', 8), P('u32', 4)]
  for (const generate of [true, false]) {
    const { pack, layout } = createPacker('k(int*, unsigned long long, unsigned)', params, { generate })
    const bytes = new Uint8Array(layout.size)
    pack([{ address: 0xfedcba9876543210n }, 2n ** 64n - 1n, -1], createPackTarget(bytes))
    assert.is(hex(bytes), '1032547698badcfe' + 'ffffffffffffffff' + 'ffffffff' + '00000000')
    pack([null, -(2n ** 63n), 4294967295], createPackTarget(bytes))
    assert.is(hex(bytes), '0000000000000000' + '0000000000000080' + 'ffffffff' + '00000000')
    assert.throws(() => pack([null, 2n ** 64n, 0], createPackTarget(bytes)), /^kernel k\(int\*, unsigned long long, unsigned\): parameter 1 expects a 64-bit integer .*\(PTX \.param \.u64\), got .* \(out of range\)$/)
    assert.throws(() => pack([null, -(2n ** 63n) - 1n, 0], createPackTarget(bytes)), /parameter 1 .*\(out of range\)$/)
    assert.throws(() => pack([null, 0n, 2 ** 32], createPackTarget(bytes)), /parameter 2 expects an integer of 32 bits .*out of range/)
    assert.throws(() => pack([null, 0n, 1.5], createPackTarget(bytes)), /parameter 2 expects an integer of 32 bits \(PTX \.param \.u32\), got 1\.5$/)
    assert.throws(() => pack([{ address: 1 }, 0n, 0], createPackTarget(bytes)), /parameter 0 expects a pointer: DeviceBuffer or device address/)
  }
})

Packer.run()
