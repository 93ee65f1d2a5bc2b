// Section `api` of `pnpm test:gpu` (issue 18 item 1d): the runtime API on the device. By-value structs of
// every layout of the marshal tests (test/runtime/host-structs.ts) and every scalar width, echoed back by
// test/fixtures/gpu/abi-echo.cu as bytes (compared with the runtime's packing and with gcc's bytes of the
// same values) and field by field (the offsets nvcc reads them at); `mod.global()` handles of __constant__ and
// __device__ variables; streams, events and async copies; dynamic shared memory past 48 KiB.
import { loadModule, maxSharedOptInFor, encode, slice, t, toBfloat16Bits, toHalfBits, type DataType, type Module } from '@kernelpack/runtime'
import { readHostFacts, schemas, values as hostValues } from '../runtime/host-structs.js'
import { abiSource, buildModule, globalsSource } from './build-module.js'
import { assert, Checks, deviceLoadOptions, openDevice, type GpuOptions, type SectionOutput } from './session.js'

/** Values for the layouts host-structs.ts has no value for. */
const moreValues: Record<string, unknown> = {
  Bits: { u: 0x3fc00001 },
  Inner: { a: 200, b: -1e-300 },
  S1: { a: -5, b: -70000, c: 100 },
  S2: { a: -300, b: -7 },
  S3: { c: 65, l: -(1n << 40n), d: -1 },
  S4: { f: [1.5, -2.25, 3e-39], d: -1e300 },
  S5: { a: 1, in: { b: -2, c: 3 }, d: -4 },
  S6: { a: -128 },
  S7: { flags: [1, 2, 3, 4, 255], x: 0xfedcba9876543210n, t: 9 },
  S8: { i: -(1n << 100n) - 12345n, c: -5 },
}
export const structValues: Record<string, unknown> = { ...moreValues, ...hostValues }

const f64bits = (x: number) => { const b = new DataView(new ArrayBuffer(8)); b.setFloat64(0, x, true); return b.getBigUint64(0, true) }
const u64 = (x: bigint) => BigInt.asUintN(64, x)

/** What fields_<T> writes for `value`: each scalar in declaration order, widened to 64 bits (abi-echo.cu's Sink). */
export function flattenValue(type: DataType, value: unknown, out: bigint[] = []): bigint[] {
  if (type.kind === 'array') {
    for (let i = 0; i < type.length; i++) flattenValue(type.elem, (value as ArrayLike<unknown>)[i], out)
    return out
  }
  if (type.kind !== 'scalar') {
    const obj = value as Record<string, unknown>
    // the kernels read a union through the member the value sets (its integer member)
    for (const f of type.kind === 'union' ? type.fields.filter((x) => obj[x.name] !== undefined) : type.fields) flattenValue(f.type, obj[f.name], out)
    return out
  }
  const v = value as number | bigint | boolean
  switch (type.name) {
    case 'bool': out.push(v ? 1n : 0n); break
    case 'f32': out.push(f64bits(Math.fround(Number(v)))); break
    case 'f64': out.push(f64bits(Number(v))); break
    case 'f16': out.push(BigInt(toHalfBits(Number(v)))); break
    case 'bf16': out.push(BigInt(toBfloat16Bits(Number(v)))); break
    case 'i128': out.push(u64(BigInt(v)), u64(BigInt(v) >> 64n)); break
    case 'u128': out.push(u64(BigInt(v)), u64(BigInt(v) >> 64n)); break
    default: out.push(u64(BigInt(v)))
  }
  return out
}

/** Which bytes of a value of `type` belong to a field (padding bytes are not copied by the kernels' echo). */
export function fieldMask(type: DataType, mask = new Uint8Array(type.size), at = 0): Uint8Array {
  if (type.kind === 'scalar') mask.fill(1, at, at + type.size)
  else if (type.kind === 'array') for (let i = 0; i < type.length; i++) fieldMask(type.elem, mask, at + i * type.elem.size)
  else for (const f of type.fields) fieldMask(f.type, mask, at + f.offset)
  return mask
}

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex')
const masked = (b: Uint8Array, m: Uint8Array) => hex(b.map((x, i) => (m[i] ? x : 0)))

export async function checkApi(o: GpuOptions): Promise<SectionOutput> {
  const checks = new Checks('api')
  const hw = o.mode === 'hardware'
  const where = hw ? 'on the GPU' : 'on the emulator standing in for the device (self-test)'
  const kernelOptions = hw ? deviceLoadOptions(o) : { backend: 'emulator' as const }
  const abi = await buildModule(abiSource, o.arch)
  const glob = await buildModule(globalsSource, o.arch)
  const host = readHostFacts()
  let mod: Module | undefined
  let gmod: Module | undefined
  try {
    mod = await loadModule(abi.both, abi.manifest, kernelOptions)
    gmod = await loadModule(glob.both, glob.manifest, kernelOptions)
  } catch (err) {
    checks.add(`load test/fixtures/gpu/abi-echo.cu and test/fixtures/runtime/globals.cu ${where}`, 'fail', (err as Error).message)
    return { checks: checks.list, kernels: [], recordings: [] }
  }
  const m = mod
  const g = gmod
  const out = await m.alloc(4096)
  const readU64 = async (n: number) => Array.from(await out.download(new BigUint64Array(n)))
  const expectU64 = (what: string, got: bigint[], want: bigint[]) => {
    const bad = want.findIndex((w, i) => got[i] !== w)
    assert(bad < 0, `${what}: field ${bad} is 0x${got[bad]?.toString(16)}, expected 0x${want[bad]?.toString(16)} (all: ${got.slice(0, want.length).map((x) => x.toString(16)).join(' ')})`)
  }

  // --- by-value structs
  for (const [name, schema] of Object.entries(schemas)) {
    const value = structValues[name]
    await checks.run(`struct ${name} (${schema.size} bytes, align ${schema.align}) by value ${where}: bytes and fields`, async () => {
      assert(value !== undefined, `no value for ${name}`)
      const mask = fieldMask(schema)
      await out.fill(0)
      await m.kernel(`echo_${name}`).launch({ grid: 1, block: 32 }, schema.of(value), out)
      await m.synchronize()
      const echoed = (await out.download()).subarray(0, schema.size)
      const packed = encode(schema, value)
      assert(masked(echoed, mask) === masked(packed, mask), `echo_${name}: the kernel saw ${hex(echoed)}, the runtime packed ${hex(packed)} (field bytes differ)`)
      const gcc = host.values[name]
      if (gcc) assert(masked(echoed, mask) === masked(Buffer.from(gcc, 'hex'), mask), `echo_${name}: the kernel saw ${hex(echoed)}, gcc lays the value out as ${gcc}`)
      const want = flattenValue(schema, value)
      await out.fill(0)
      await m.kernel(`fields_${name}`).launch({ grid: 1, block: 32 }, schema.of(value), out)
      await m.synchronize()
      expectU64(`fields_${name}`, await readU64(want.length), want)
      return `${want.length} fields${gcc ? ', bytes equal gcc\'s' : ''}`
    })
  }

  await checks.run(`every scalar width in one parameter list (char … unsigned __int128, void*) ${where}`, async () => {
    const x = -(1n << 100n) - 12345n
    const y = (0xfedcba9876543210n << 64n) | 0x0123456789abcdefn
    const ptr = 0x7f0000001000n
    await out.fill(0)
    await m.kernel('fields_scalars').launch({ grid: 1, block: 32 }, -5, -128, 250, -300, 65000, -70000, 4000000000, -(1n << 40n), 18446744073709551611n,
      1.5, -2.25, true, t.f16.of(1.5), t.bf16.of(-3.5), x, y, ptr, out)
    await m.synchronize()
    const want = [-5n, -128n, 250n, -300n, 65000n, -70000n, 4000000000n, -(1n << 40n), 18446744073709551611n].map(u64)
    want.push(f64bits(1.5), f64bits(-2.25), 1n, BigInt(toHalfBits(1.5)), BigInt(toBfloat16Bits(-3.5)), u64(x), u64(x >> 64n), u64(y), u64(y >> 64n), ptr)
    expectU64('fields_scalars', await readU64(want.length), want)
  })

  await checks.run(`structs and scalars interleaved (char, Mixed, short, Aligned16, bool, Arrays, double) ${where}`, async () => {
    const v = structValues
    await out.fill(0)
    await m.kernel('fields_mixed').launch({ grid: 1, block: 32 }, -5, schemas.Mixed!.of(v.Mixed), -300, schemas.Aligned16!.of(v.Aligned16), true, schemas.Arrays!.of(v.Arrays), -2.25, out)
    await m.synchronize()
    const want = [u64(-5n), ...flattenValue(schemas.Mixed!, v.Mixed), u64(-300n), ...flattenValue(schemas.Aligned16!, v.Aligned16), 1n, ...flattenValue(schemas.Arrays!, v.Arrays), f64bits(-2.25)]
    expectU64('fields_mixed', await readU64(want.length), want)
  })

  await checks.run(`a slice(buffer, length) fills a (pointer, size_t) parameter pair ${where}`, async () => {
    const xs = Float32Array.from({ length: 37 }, (_, i) => i * 0.5)
    const buf = await m.upload(xs)
    await out.fill(0)
    await m.kernel('slice_sum').launch({ grid: 1, block: 32 }, slice(buf, 30), out)
    const got = await out.download(new Float64Array(2))
    const want = xs.subarray(0, 30).reduce((a, b) => a + b, 0)
    assert(got[0] === want && got[1] === 30, `slice_sum saw sum ${got[0]} over ${got[1]} elements, expected ${want} over 30`)
    await buf.free()
  })

  // --- module variables
  await checks.run(`mod.global(): __constant__ coeffs uploaded, read by scale<float> ${where}`, async () => {
    const coeffs = await g.global('coeffs')
    assert(coeffs.size === 16 && coeffs.space === 'const', `coeffs: size ${coeffs.size}, space ${coeffs.space}`)
    await coeffs.upload(Float32Array.of(2, 0.5, 0, 0))
    const n = 100
    const x = await g.upload(Float32Array.from({ length: n }, (_, i) => i - 50))
    await g.kernel('scale<float>').launch({ grid: 1, block: 128 }, x, n)
    const got = await x.download(new Float32Array(n))
    const bad = got.findIndex((v, i) => v !== (i - 50) * 2 + 0.5)
    assert(bad < 0, `x[${bad}] = ${got[bad]}, expected ${(bad - 50) * 2 + 0.5}`)
    const back = await coeffs.download(new Float32Array(4))
    assert(back[0] === 2 && back[1] === 0.5, `coeffs read back ${Array.from(back)}`)
    await x.free()
  })

  await checks.run(`mod.global(): __device__ counter (atomicAdd), ns::table (fill_table), and a variable passed as a pointer ${where}`, async () => {
    const counter = await g.global('counter')
    await counter.write(Int32Array.of(0))
    await g.kernel('count').launch({ grid: 1, block: 64 }, 40)
    await g.synchronize()
    const c = (await counter.download(new Int32Array(1)))[0]
    assert(c === 40, `counter = ${c} after count<<<1, 64>>>(40), expected 40`)
    const table = await g.global('_ZN2ns5tableE')
    assert(table.size === 64, `ns::table size ${table.size}, expected 64`)
    await g.kernel('fill_table').launch({ grid: 1, block: 32 }, 1.5)
    const tv = await table.download(new Float64Array(8))
    assert(tv.every((v, i) => v === 1.5 * i), `ns::table = ${Array.from(tv)}`)
    await g.kernel('constructor').launch({ grid: 1, block: 1 }, counter)
    const seven = (await counter.download(new Int32Array(1)))[0]
    assert(seven === 7, `constructor(&counter) left ${seven}, expected 7`)
  })

  // --- streams, events, async copies
  await checks.run(`streams: launches queued on two streams run in order per stream ${where}`, async () => {
    const n = 4096
    const [s1, s2] = [await m.createStream(), await m.createStream()]
    const init = Int32Array.from({ length: n }, (_, i) => i)
    const [x1, x2] = [await m.upload(init), await m.upload(init)]
    for (let i = 0; i < 50; i++) {
      await m.kernel('add_one').launch({ grid: n / 256, block: 256, stream: s1 }, x1, n)
      if (i < 30) await m.kernel('add_one').launch({ grid: n / 256, block: 256, stream: s2 }, x2, n)
    }
    await s1.synchronize()
    await s2.synchronize()
    const [a, b] = [await x1.download(new Int32Array(n)), await x2.download(new Int32Array(n))]
    assert(a.every((v, i) => v === i + 50), `stream 1: x[0] = ${a[0]}, expected 50`)
    assert(b.every((v, i) => v === i + 30), `stream 2: x[0] = ${b[0]}, expected 30`)
    await Promise.all([x1.free(), x2.free(), s1.destroy(), s2.destroy()])
  })

  if (!hw) checks.notRun('events: elapsed time between two events around kernels on a stream and on the default stream', 'needs a driver that runs kernels (self-test against the libcuda test double; the emulator\'s own events are tested in test/runtime/events.test.ts)')
  else {
    await checks.run('events: elapsed time between two events around kernels on a stream and on the default stream', async () => {
      const n = 1 << 22
      const s = await m.createStream()
      const x = await m.alloc(4 * n)
      const [e0, e1, e2, e3] = [await m.createEvent(), await m.createEvent(), await m.createEvent(), await m.createEvent()]
      await e0.record(s)
      for (let i = 0; i < 20; i++) await m.kernel('add_one').launch({ grid: n / 256, block: 256, stream: s }, x, n)
      await e1.record(s)
      const onStream = await e1.elapsedSince(e0)
      await e2.record()
      await m.kernel('add_one').launch({ grid: n / 256, block: 256 }, x, n)
      await e3.record()
      const onDefault = await e3.elapsedSince(e2)
      const v = (await x.download(new Int32Array(1)))[0]
      assert(v === 21, `x[0] = ${v} after 21 add_one, expected 21`)
      assert(onStream > 0 && onStream < 60_000 && onDefault > 0 && onDefault < 60_000, `elapsed ${onStream} ms and ${onDefault} ms`)
      for (const e of [e0, e1, e2, e3]) await e.destroy()
      await x.free()
      await s.destroy()
      return `20 × add_one over 4 M ints: ${onStream.toFixed(3)} ms (stream); 1 × on the default stream: ${onDefault.toFixed(3)} ms`
    })
  }

  await checks.run('async copies and memset on a stream (Backend.copyToDevice/copyFromDevice/memset with a stream: cuMemcpyHtoDAsync, cuMemcpyDtoHAsync, cuMemsetD8Async)', async () => {
    const backend = await openDevice(o)
    const n = 1 << 20
    const s = await backend.createStream()
    const src = Uint8Array.from({ length: n }, (_, i) => (i * 7 + 3) & 0xff)
    const a = await backend.alloc(n)
    const b = await backend.alloc(n)
    await backend.copyToDevice(a, src, s)
    await backend.memset(b, 0xab, n, s)
    await backend.synchronize(s)
    const back = new Uint8Array(n)
    const fill = new Uint8Array(n)
    await backend.copyFromDevice(back, a, s)
    await backend.copyFromDevice(fill, b, s)
    const bad = back.findIndex((v, i) => v !== src[i])
    assert(bad < 0, `round trip: byte ${bad} is ${back[bad]}, expected ${src[bad]}`)
    assert(fill.every((v) => v === 0xab), 'memset on the stream: not every byte is 0xab')
    await backend.free(a)
    await backend.free(b)
    await backend.destroyStream(s)
    return `1 MiB up, memset, down on one stream (${backend.device().name})`
  })

  await checks.run(`dynamic shared memory past 48 KiB with setAttribute('maxDynamicSharedMemorySize') ${where}`, async () => {
    const words = 25_000
    const k = g.kernel('shared_rotate')
    k.setAttribute('maxDynamicSharedMemorySize', words * 4)
    const r = await g.alloc(4)
    await k.launch({ grid: 1, block: 256, sharedBytes: words * 4 }, r, words)
    const v = (await r.download(new Int32Array(1)))[0]
    assert(v === words - 1, `shared_rotate with ${words * 4} bytes: ${v}, expected ${words - 1}`)
    await r.free()
  })

  if (!hw) checks.notRun("the runtime's opt-in shared memory table equals the device's CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN", 'the test double reports its own table (self-test)')
  else {
    await checks.run("the runtime's opt-in shared memory table equals the device's CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN", async () => {
      const d = (await openDevice(o)).device()
      const table = maxSharedOptInFor(d.computeCapability)
      assert(d.maxSharedMemoryPerBlockOptin === table, `device says ${d.maxSharedMemoryPerBlockOptin} bytes, the runtime's table ${table} for ${d.computeCapability.join('.')}`)
      return `${table} bytes`
    })
  }
  await out.free()
  await m.unload()
  await g.unload()
  return { checks: checks.list, kernels: [], recordings: [] }
}
