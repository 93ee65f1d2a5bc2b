// Struct types from the compiler (issue 28): kernels taking structs by value in real-world shapes
// (test/fixtures/struct-params: llm.c-style hyperparameters, a cuda-samples-style simulation struct with
// vector types, nested and over-aligned, fixed arrays, a template struct, a typedef'd unnamed struct, a
// union), built with nvcc and with clang. The layouts read from the DWARF each compiler's output gives (nvcc:
// gcc -g on its device front end's C, device-c.ts; clang: its host compile) agree, equal
// g++'s sizeof/alignof/offsetof, marshal to the bytes a hand-written schema gives, arrive on the device as
// those bytes; the .d.ts types them (snapshot), tsc accepts an app that passes objects and rejects a wrong
// field; a bit-field struct keeps its bytes with a note; a host/device layout disagreement is an error where the
// layout comes from the host compile.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { execFileSync, spawnSync } from 'node:child_process'
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { buildCudaFile, processCounter, type BuildResult } from '@kernelpack/toolchain'
import { emitLoaderDts } from '@kernelpack/codegen'
import { alignof, encode, loadModule, namedValueTypes, offsetof, sizeof, t, type DataType, type Module } from '@kernelpack/runtime'
import { fixturesDir, repoRoot, tempDir, tool } from '../helpers/tools.js'
import { matchSnapshot } from '../helpers/snapshot.js'

tool('nvcc')
tool('clang')
const dir = join(fixturesDir, 'struct-params')
const cacheDir = join(repoRoot, 'test', '.out', 'struct-params-cache')
const builds: Record<'nvcc' | 'clang', BuildResult> = {
  nvcc: await buildCudaFile(join(dir, 'params.cu'), { compiler: 'nvcc', cacheDir }),
  clang: await buildCudaFile(join(dir, 'params.cu'), { compiler: 'clang', cacheDir }),
}
const COMPILERS = ['nvcc', 'clang'] as const

// The same types written by hand, as a user would without kernelpack reading them (runtime schemas).
const float2 = t.struct({ x: t.f32, y: t.f32 }, { align: 8 })
const float3 = t.struct({ x: t.f32, y: t.f32, z: t.f32 })
const float4 = t.struct({ x: t.f32, y: t.f32, z: t.f32, w: t.f32 }, { align: 16 })
const half2 = t.struct({ x: t.f16, y: t.f16 }, { align: 4 })
const Camera = t.struct({ origin: float3, dir: float3, fov: t.f32 })
const HAND: Record<string, DataType> = {
  LayerNormParams: t.struct({ B: t.i32, T: t.i32, C: t.i32, eps: t.f32 }),
  AdamParams: t.struct({ lr: t.f32, beta1: t.f32, beta2: t.f32, eps: t.f32, weight_decay: t.f32, grad_scale: t.f32, seed: t.u64, t: t.i32 }),
  Camera,
  SimParams: t.struct({ gravity: float4, damping: t.f32, numBodies: t.i32, bounds: t.array(float2, 2), cam: Camera, flags: t.array(t.i16, 3), scale: half2, dt: t.f64 }, { align: 16 }),
  'Stencil<float, 5>': t.struct({ w: t.array(t.f32, 5), radius: t.i32 }),
  Rgba8: t.struct({ r: t.u8, g: t.u8, b: t.u8, a: t.u8 }),
  Word: t.union({ f: t.f32, u: t.u32, bytes: t.array(t.u8, 4) }),
}
const sim = {
  gravity: { x: 0, y: -9.81, z: 0, w: 0 }, damping: 0.99, numBodies: 64,
  bounds: [{ x: -1, y: -1 }, { x: 1, y: 1 }], cam: { origin: { x: 0, y: 1, z: -5 }, dir: { x: 0, y: 0, z: 1 }, fov: 0.8 },
  flags: [1, -2, 3], scale: { x: 0.5, y: 2 }, dt: 1 / 60,
}
const adam = { lr: 1e-3, beta1: 0.9, beta2: 0.999, eps: 1e-8, weight_decay: 0.01, grad_scale: 0.5, seed: 1234567890123n, t: 3 }
const stencil = { w: [0.1, 0.2, 0.4, 0.2, 0.1], radius: 2 }
const VALUES: Record<string, unknown> = {
  LayerNormParams: { B: 2, T: 3, C: 8, eps: 1e-5 }, AdamParams: adam, Camera: sim.cam, SimParams: sim, 'Stencil<float, 5>': stencil,
  Rgba8: { r: 10, g: 20, b: 30, a: 255 }, Word: { u: 0xff00ff0f },
}

/** The promise rejects with a message matching `re`. */
async function rejects(p: Promise<unknown>, re: RegExp): Promise<void> {
  const err = await p.then(() => undefined, (e: unknown) => e as Error)
  assert.ok(err, `expected a rejection matching ${re}`)
  assert.match(err!.message, re)
}

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex')
const kernelOf = (r: BuildResult, name: string) => r.manifest.kernels.find((k) => k.name === name || k.demangled.startsWith(`void ${name}<`))!

const types = suite('struct types from the compiler')

types('nvcc (gcc\'s DWARF) and clang give every by-value parameter the same C++ layout', () => {
  const n = builds.nvcc.manifest.kernels
  const c = builds.clang.manifest.kernels
  assert.equal(n.map((k) => k.name).sort(), c.map((k) => k.name).sort())
  for (const k of n) {
    const other = c.find((x) => x.name === k.name)!
    assert.equal(k.params.map((p) => p.valueType ?? p.valueTypeNote ?? null), other.params.map((p) => p.valueType ?? p.valueTypeNote ?? null), k.demangled)
  }
  assert.equal(Object.keys(namedValueTypes(builds.nvcc.manifest)).sort(), ['AdamParams', 'Camera', 'LayerNormParams', 'Rgba8', 'SimParams', 'Stencil<float, 5>', 'Tracer', 'Word', '__half2', 'float2', 'float3', 'float4', 'physics::Inner', 'render::Inner'])
})

types('the layouts are what g++ says: sizeof, alignof and offsetof of every field (nested ones by path)', () => {
  const exe = join(tempDir('kp-offsets-'), 'offsets')
  execFileSync(tool('g++'), ['-std=c++17', '-I', '/usr/local/cuda/include', '-I', '/usr/local/cuda/include/cccl', join(dir, 'offsets.cpp'), '-o', exe])
  const host = JSON.parse(execFileSync(exe, { encoding: 'utf8' })) as Record<string, { size: number; align: number; fields: Record<string, number> }>
  for (const compiler of COMPILERS) {
    const named = namedValueTypes(builds[compiler].manifest)
    for (const [cname, facts] of Object.entries(host)) {
      const codec = named[cname === 'Stencil5' ? 'Stencil<float, 5>' : cname]
      assert.ok(codec, `${compiler}: ${cname} is among the kernels' types`)
      assert.equal([sizeof(codec!.type), alignof(codec!.type)], [facts.size, facts.align], `${compiler} ${cname}`)
      for (const [path, offset] of Object.entries(facts.fields)) assert.is(offsetof(codec!.type, path), offset, `${compiler} ${cname}.${path}`)
    }
  }
})

types('objects marshal to the bytes a hand-written schema gives, and module.types encodes arrays of them', () => {
  for (const compiler of COMPILERS) {
    const named = namedValueTypes(builds[compiler].manifest)
    for (const [cname, hand] of Object.entries(HAND)) {
      const codec = named[cname]!
      assert.is(hex(codec.encode(VALUES[cname])), hex(encode(hand, VALUES[cname])), `${compiler} ${cname}`)
    }
    const two = named.SimParams!.encodeArray([sim, { ...sim, numBodies: 7 }])
    assert.is(two.length, 2 * 96)
    assert.is(hex(two.subarray(96)), hex(encode(HAND.SimParams!, { ...sim, numBodies: 7 })))
  }
})

async function emulated(r: BuildResult): Promise<Module> {
  return loadModule(r.offload, r.manifest, { backend: 'emulator' })
}

types('module.types reads them back: decode and decodeArray of what a kernel wrote (emulator)', async () => {
  // values exact in their C types, so that reading gives back what was written
  const exact = { ...sim, damping: 0.5, gravity: { x: 0, y: -9.75, z: 0.25, w: 0 }, cam: { ...sim.cam, fov: 0.75 }, scale: { x: 0.5, y: -2 }, dt: 1 / 64 }
  const adamExact = { ...adam, lr: 0.125, beta1: 0.875, beta2: 0.9990234375, eps: 2 ** -20, weight_decay: 0.0625 }
  for (const compiler of COMPILERS) {
    const mod = await emulated(builds[compiler])
    try {
      const named = namedValueTypes(builds[compiler].manifest)
      const out = await mod.alloc(96)
      await mod.kernel('echo_sim').launch({ grid: 1, block: 1 }, exact, out)
      assert.equal(named.SimParams!.decode(await out.download()), exact, compiler)
      await mod.kernel('echo_adam').launch({ grid: 1, block: 1 }, adamExact, out)
      assert.equal(named.AdamParams!.decode(await out.download()), { ...adamExact, seed: 1234567890123n }, compiler)
      const list = [exact, { ...exact, numBodies: 3, flags: [-1, 0, 1] }]
      assert.equal(named.SimParams!.decodeArray(named.SimParams!.encodeArray(list)), list)
      assert.throws(() => named.SimParams!.decodeArray(new Uint8Array(100)), /SimParams\.decodeArray: 100 bytes are not a whole number of SimParams \(96 bytes each\)/)
      assert.equal(named.Word!.decode(named.Word!.encode({ u: 0x01020304 })), Uint8Array.from([4, 3, 2, 1]))
    } finally {
      await mod.unload()
    }
  }
})

types('the device sees exactly those bytes, and kernels compute with the fields (emulator)', async () => {
  for (const compiler of COMPILERS) {
    const r = builds[compiler]
    const mod = await emulated(r)
    try {
      const out = await mod.alloc(96)
      await mod.kernel('echo_sim').launch({ grid: 1, block: 1 }, ...[sim, out])
      assert.is(hex(await out.download()), hex(encode(HAND.SimParams!, sim)), `${compiler}: echo_sim`)
      await mod.kernel('echo_adam').launch({ grid: 1, block: 1 }, ...[adam, out])
      assert.is(hex((await out.download()).subarray(0, 40)), hex(encode(HAND.AdamParams!, adam)), `${compiler}: echo_adam`)
      await mod.kernel('echo_stencil').launch({ grid: 1, block: 1 }, ...[stencil, out])
      assert.is(hex((await out.download()).subarray(0, 24)), hex(encode(HAND['Stencil<float, 5>']!, stencil)), `${compiler}: echo_stencil`)

      // the 5-tap stencil, as the template kernel computes it
      const n = 64
      const x = Float32Array.from({ length: n }, (_, i) => (i * 7) % 13)
      const dx = await mod.upload(x)
      const dy = await mod.upload(new Float32Array(n))
      await mod.kernel(kernelOf(r, 'stencil1d').name).launch({ grid: 1, block: 64 }, ...[stencil, dx, dy, n])
      const y = new Float32Array((await dy.download()).buffer)
      for (let i = 2; i < n - 2; i++) {
        let acc = 0
        for (let k = 0; k < 5; k++) acc = Math.fround(acc + Math.fround(Math.fround(stencil.w[k]!) * x[i - 2 + k]!))
        assert.ok(Math.abs(y[i]! - acc) <= 1e-6 * Math.max(1, Math.abs(acc)), `${compiler} stencil1d[${i}]: ${y[i]} vs ${acc}`)
      }

      // __half and __nv_bfloat16 by value take plain numbers (their layout says what they are)
      assert.equal(kernelOf(r, 'half_product').params.slice(0, 2).map((p) => p.valueType), [{ kind: 'scalar', name: 'f16' }, { kind: 'scalar', name: 'bf16' }])
      await mod.kernel('half_product').launch({ grid: 1, block: 1 }, 1.5, -2.5, dy)
      assert.is(new Float32Array((await dy.download()).buffer)[0], -3.75, `${compiler}: half_product`)

      // namespaced types of one name, a derived struct (its base's fields first), cuda::std::array as its array
      const ms = kernelOf(r, 'mixed_scopes').params
      assert.equal(ms.slice(0, 4).map((p) => p.valueType!.kind === 'array' ? 'array' : (p.valueType as { name: string }).name), ['physics::Inner', 'render::Inner', 'Tracer', 'array'])
      assert.equal((ms[2]!.valueType as { fields: Array<{ name: string; offset: number }> }).fields.map((f) => [f.name, f.offset]), [['pos', 0], ['id', 12], ['charge', 16]])
      await mod.kernel('mixed_scopes').launch({ grid: 1, block: 1 }, { mass: 1.5, kind: 2 }, { depth: 0.25 }, { pos: { x: 1, y: 100, z: 2 }, id: 3, charge: 0.5 }, Float32Array.of(2, 3, 4), dy)
      assert.is(new Float32Array((await dy.download()).buffer)[0], 3 + 0.25 + 1 + 2 + 3 + 0.5 + 6 + 4, `${compiler}: mixed_scopes`)

      // tint: a typedef'd unnamed struct and a union by value
      const img = await mod.upload(Uint8Array.from([1, 2, 3, 4, 250, 251, 252, 253]))
      await mod.kernel('tint').launch({ grid: 1, block: 32 }, ...[{ r: 10, g: 20, b: 30, a: 255 }, { bytes: [0xff, 0x0f, 0xf0, 0] }, img, 2])
      assert.equal([...await img.download()], [11, 22 & 0x0f, 33 & 0xf0, 255, (250 + 10) & 0xff, (251 + 20) & 0x0f & 0xff, (252 + 30) & 0xf0 & 0xff, 255])
    } finally {
      await mod.unload()
    }
  }
})

types('a missing or extra field is a TypeError naming the kernel, the parameter and the field', async () => {
  const mod = await emulated(builds.nvcc)
  try {
    const out = await mod.alloc(96)
    const k = mod.kernel('echo_sim')
    const { dt: _dt, ...noDt } = sim
    await rejects(k.launch({ grid: 1, block: 1 }, ...[noDt, out]), /kernel echo_sim: parameter 0 \(p\)\.dt: missing field \(f64\)/)
    await rejects(k.launch({ grid: 1, block: 1 }, ...[{ ...sim, cam: { ...sim.cam, fvo: 1 } }, out]), /kernel echo_sim: parameter 0 \(p\)\.cam\.fvo: no such field \(the fields are origin, dir, fov\)/)
    await rejects(k.launch({ grid: 1, block: 1 }, ...[{ ...sim, flags: [1, 2] }, out]), /kernel echo_sim: parameter 0 \(p\)\.flags: expected an array of 3 i16/)
    // the bytes still work, as before
    await k.launch({ grid: 1, block: 1 }, ...[encode(HAND.SimParams!, sim), out])
    assert.is(hex(await out.download()), hex(encode(HAND.SimParams!, sim)))
  } finally {
    await mod.unload()
  }
})

types('bit-fields: no object layout, the parameter takes its bytes, a note says why', async () => {
  for (const compiler of COMPILERS) {
    const r = builds[compiler]
    const p = kernelOf(r, 'unpack_flags').params[0]!
    assert.is(p.valueType, undefined)
    assert.match(p.valueTypeNote ?? '', /^Packed cannot be described: Packed has bit-fields$/)
    assert.ok(r.warnings.some((w) => w.severity === 'note' && /kernel unpack_flags: parameter 0 \(f\) takes its 4 bytes .*Packed has bit-fields/.test(w.message)), `${compiler}: a build note`)
    const mod = await emulated(r)
    try {
      const out = await mod.alloc(12)
      const word = 5 | (17 << 3) | (1000 << 8)
      await mod.kernel('unpack_flags').launch({ grid: 1, block: 1 }, ...[new Uint8Array(new Uint32Array([word]).buffer), out])
      assert.equal([...new Uint32Array((await out.download()).buffer)], [5, 17, 1000])
    } finally {
      await mod.unload()
    }
  }
})

types('the .d.ts types each struct with its C++ field names (snapshot; nvcc and clang write the same)', () => {
  const dts = emitLoaderDts({ manifest: builds.nvcc.manifest, name: 'params.cu' })
  matchSnapshot(dts, 'struct-params/params.cu.d.ts.snap')
  assert.is(emitLoaderDts({ manifest: builds.clang.manifest, name: 'params.cu' }), dts)
})

types('tsc accepts an app that passes objects and fills buffers with module.types, and rejects a wrong field name', () => {
  const proj = join(repoRoot, 'test', '.out', 'struct-params-tsc')
  rmSync(proj, { recursive: true, force: true })
  mkdirSync(proj, { recursive: true })
  writeFileSync(join(proj, 'params.cu.d.ts'), emitLoaderDts({ manifest: builds.nvcc.manifest, name: 'params.cu' }))
  writeFileSync(join(proj, 'tsconfig.json'), JSON.stringify({ compilerOptions: { target: 'es2022', module: 'esnext', moduleResolution: 'bundler', strict: true, noEmit: true, skipLibCheck: true, types: [] }, include: ['app.ts'] }))
  const app = `import { adamw_step, integrate, stencil1d, tint, module, type SimParams } from './params.cu'
const sim: SimParams = ${JSON.stringify(sim)}
export async function step(pos: ${'Awaited<ReturnType<typeof module.alloc>>'}, vel: typeof pos): Promise<Uint8Array> {
  await integrate({ grid: 1, block: 64 }, sim, pos, vel)
  await adamw_step({ grid: 1, block: 64 }, { lr: 1e-3, beta1: 0.9, beta2: 0.999, eps: 1e-8, weight_decay: 0, grad_scale: 1, seed: 1n, t: 1 }, pos, vel, pos, vel, 64)
  await stencil1d({ grid: 1, block: 64 }, { w: new Float32Array(5), radius: 2 }, pos, vel, 64)
  await tint({ grid: 1, block: 64 }, { r: 1, g: 2, b: 3, a: 4 }, { u: 0xffffffff }, pos, 64)
  return module.types.SimParams.encodeArray([sim, { ...sim, numBodies: 1 }])
}
`
  const tsc = join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc')
  const run = () => spawnSync(process.execPath, [tsc, '-p', proj], { cwd: proj, encoding: 'utf8' })
  writeFileSync(join(proj, 'app.ts'), app)
  const ok = run()
  assert.is(ok.status, 0, ok.stdout + ok.stderr)
  // one run over three wrong apps: a misspelt field of a nested struct, a missing field, a string for a number
  writeFileSync(join(proj, 'tsconfig.json'), JSON.stringify({ compilerOptions: { target: 'es2022', module: 'esnext', moduleResolution: 'bundler', strict: true, noEmit: true, skipLibCheck: true, types: [] }, include: ['bad1.ts', 'bad2.ts', 'bad3.ts'] }))
  writeFileSync(join(proj, 'bad1.ts'), app.replace('"fov":0.8', '"fvo":0.8'))
  writeFileSync(join(proj, 'bad2.ts'), app.replace(', t: 1 }', ' }'))
  writeFileSync(join(proj, 'bad3.ts'), app.replace('{ r: 1,', "{ r: '1',"))
  const bad = run()
  assert.is.not(bad.status, 0, 'tsc must reject them')
  assert.match(bad.stdout, /bad1\.ts\(2,\d+\): error TS2353: Object literal may only specify known properties, and '"?fvo"?' does not exist in type/)
  assert.match(bad.stdout, /bad2\.ts\(\d+,\d+\): error TS2345: .*Property 't' is missing/s)
  assert.match(bad.stdout, /bad3\.ts\(\d+,\d+\): error TS2322: Type 'string' is not assignable to type 'number'/)
  assert.is(bad.stdout.match(/error TS/g)?.length, 3, bad.stdout)
})

types('a type the host and device lay out differently: nvcc gives the device\'s layout (the one the kernel reads), clang\'s host compile is a build error naming it', async () => {
  const d = tempDir('kp-skew-')
  const file = join(d, 'skew.cu')
  writeFileSync(file, `// a struct with a device-only member: the host's layout is not the device's
struct Skew {
    int a;
#ifdef __CUDA_ARCH__
    int b;
#endif
};
extern "C" __global__ void k(Skew s, int *out) { out[0] = s.a; }
`)
  // nvcc: the types come from its device front end's C (device-c.ts)
  const r = await buildCudaFile(file, { compiler: 'nvcc', cacheDir: false })
  assert.equal(r.manifest.kernels[0]!.params[0]!.valueType, { kind: 'struct', name: 'Skew', size: 8, align: 4, fields: [
    { name: 'a', offset: 0, type: { kind: 'scalar', name: 'i32' } }, { name: 'b', offset: 4, type: { kind: 'scalar', name: 'i32' } },
  ] })
  // clang: from a host compile, which has no b
  await rejects(buildCudaFile(file, { compiler: 'clang', cacheDir: false }),
    /skew\.cu: kernel k: parameter 0 \(s\) of type Skew is 4 bytes aligned to 4 in the host compile's layout, but the PTX declares \.param \.align 4 \.b8 \[8\]/)
})

types('nvcc: every way a build reaches the device front end\'s C gives the same types (the whole-file compile, a PTX-only build\'s front-end compile, -G, a launcher)', async () => {
  const expected = builds.nvcc.manifest.kernels.map((k) => k.params.map((p) => p.valueType ?? p.valueTypeNote ?? null))
  const launcher = join(tempDir('kp-launch-'), 'launch.sh')
  writeFileSync(launcher, '#!/bin/sh\nexec "$@"\n', { mode: 0o755 })
  for (const options of [{ arch: 'compute_80' }, { debug: true }, { launcher }]) {
    // nvcc's plan for these arguments, asked once per process (compile.ts nvccPlan), is not counted below
    if (options.arch) await buildCudaFile(join(dir, 'params.cu'), { compiler: 'nvcc', cacheDir: false, ...options })
    const before = processCounter.spawned
    const r = await buildCudaFile(join(dir, 'params.cu'), { compiler: 'nvcc', cacheDir: false, ...options })
    // a PTX alone: one nvcc process gives the PTX and the front end's C; the gcc and readelf of that C ran in the
    // build before, and this process keeps their dump by the C's text (device-c.ts)
    if (options.arch) assert.is(processCounter.spawned - before, 1)
    assert.equal(r.manifest.kernels.map((k) => k.params.map((p) => p.valueType ?? p.valueTypeNote ?? null)), expected, JSON.stringify(options))
  }
})

types('nvcc\'s device front end C and clang\'s host compile agree on what C spells differently: a member of an empty type, an enum class, an anonymous union, bit-fields; a vtable pointer is named', async () => {
  const d = tempDir('kp-cshapes-')
  const file = join(d, 'shapes.cu')
  writeFileSync(file, `struct Base { virtual __device__ float f() const { return 1; } int x; };
struct E {};
struct WithE { E e; int y; };
struct Bits { unsigned a : 3; unsigned b : 5; };
enum class Mode : unsigned char { A, B };
enum Plain { P0, P1 = 300 };
struct Anon { union { int i; float f; }; int z; };
struct Holder { Mode m; Plain p; WithE w[2]; };
namespace { struct Hidden { short s; double d; }; }
namespace lib { template <typename T, int N> struct Tile { T v[N]; }; }
extern "C" __global__ void k(Base b, WithE w, Holder h, Anon an, Bits bits, Hidden hid, lib::Tile<lib::Tile<float, 2>, 3> t, float *o) {
  o[0] = b.x + w.y + (int)h.m + h.p + an.z + bits.a + hid.s + t.v[0].v[1];
}
`)
  const n = await buildCudaFile(file, { compiler: 'nvcc', cacheDir: false })
  const c = await buildCudaFile(file, { compiler: 'clang', cacheDir: false })
  const of = (r: BuildResult) => r.manifest.kernels[0]!.params.map((p) => p.valueType ?? null)
  assert.equal(of(n).slice(1), of(c).slice(1))
  assert.equal(of(n)[1], { kind: 'struct', name: 'WithE', size: 8, align: 4, fields: [
    { name: 'e', offset: 0, type: { kind: 'struct', name: 'E', size: 1, align: 1, fields: [] } }, { name: 'y', offset: 4, type: { kind: 'scalar', name: 'i32' } },
  ] })
  // names as the host compile's DWARF gives them: no anonymous namespace, template arguments as written
  assert.equal([n.manifest.kernels[0]!.params[5]!.valueType, n.manifest.kernels[0]!.params[6]!.valueType].map((v) => v?.kind === 'struct' ? v.name : v?.kind), ['Hidden', 'lib::Tile<lib::Tile<float, 2>, 3>'])
  const notes = n.manifest.kernels[0]!.params.map((p) => p.valueTypeNote ?? null)
  assert.match(notes[0]!, /Base has virtual functions \(a vtable pointer\)/)
  assert.match(notes[3]!, /Anon has an unnamed member/)
  assert.match(notes[4]!, /Bits has bit-fields/)
})

types('nvcc: a struct the device front end\'s C cannot spell (__int128 becomes long long there) is read from the host compile instead, as clang reads it', async () => {
  const d = tempDir('kp-i128-')
  const file = join(d, 'wide.cu')
  writeFileSync(file, `struct Wide { __int128 big; char tag; };
struct Pair { unsigned __int128 lo; float f; };
extern "C" __global__ void wide(Wide w, Pair p, long long *out) { out[0] = (long long)w.big + w.tag + (long long)p.lo + (long long)p.f; }
`)
  const n = await buildCudaFile(file, { compiler: 'nvcc', cacheDir: false })
  const c = await buildCudaFile(file, { compiler: 'clang', cacheDir: false })
  const wide = n.manifest.kernels[0]!.params[0]!.valueType
  assert.equal(wide, { kind: 'struct', name: 'Wide', size: 32, align: 16, fields: [
    { name: 'big', offset: 0, type: { kind: 'scalar', name: 'i128' } }, { name: 'tag', offset: 16, type: { kind: 'scalar', name: 'i8' } },
  ] })
  assert.equal(n.manifest.kernels[0]!.params.map((p) => p.valueType), c.manifest.kernels[0]!.params.map((p) => p.valueType))
})

types.run()
