// The probe that decides how fma.rn.f32 is computed on a WebGPU device (packages/webgpu/src/fma-probe.ts, issue
// 26 item 4): WGSL's fma() where the device fuses it, the exact emulated sequence elsewhere. Its triples must
// tell the two apart, its verdict must need every one of them fused, and on Dawn's SwiftShader (whose fma()
// rounds the product first) it must ask for the exact sequence; in the browser, exact-rounding.test.ts's
// fma.rn results being the emulator's shows the backend acting on it.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { create } from 'webgpu'
import { FMA_PROBE, fmaIsFused, fusedF32, needsExactFma, probeFma } from '../../packages/webgpu/src/fma-probe.js'
import { runUnderDawn } from '../helpers/webgpu.js'
import { bitsOf, exactFma32, fromBits } from '../emulator/fma-cases.js'

runUnderDawn(import.meta.filename)

// kept referenced for the file's life: Dawn crashes once its GPU object is collected (node.test.ts)
const gpu = create([])
const s = suite('WebGPU: is fma() fused on this device')

const roundedFirst = ([a, b, c]: readonly [number, number, number]) => bitsOf(Math.fround(Math.fround(fromBits(a) * fromBits(b)) + fromBits(c)))

s('each probe triple\'s fused result is the exact one and differs from rounding the product first', () => {
  for (const t of FMA_PROBE) {
    const fused = fusedF32(...t)
    assert.is(fused, bitsOf(exactFma32(fromBits(t[0]), fromBits(t[1]), fromBits(t[2]))), `fusedF32 of ${t.map((x) => x.toString(16))}`)
    assert.is.not(fused, roundedFirst(t), `${t.map((x) => x.toString(16))} does not tell a fused fma from one that rounds the product first`)
  }
})

s('the verdict is fused only when every result is the fused one', () => {
  const fused = FMA_PROBE.map((t) => fusedF32(...t))
  assert.ok(fmaIsFused(fused, fused))
  assert.not.ok(fmaIsFused(FMA_PROBE.map(roundedFirst), fused))
  for (let i = 0; i < fused.length; i++) {
    const one = [...fused]
    one[i] = roundedFirst(FMA_PROBE[i]!)
    assert.not.ok(fmaIsFused(one, fused), `result ${i} rounded first`)
  }
  assert.not.ok(fmaIsFused(fused.slice(1), fused), 'a result missing')
})

s('SwiftShader (Dawn): its fma() rounds the product first, so the exact sequence is asked for', async () => {
  const adapter = await gpu.requestAdapter()
  assert.ok(adapter, 'no WebGPU adapter (Dawn over SwiftShader)')
  const device = await adapter!.requestDevice()
  // the probe ran (not the verdict of a failure): every result is the product rounded first
  assert.equal([...await probeFma(device)], FMA_PROBE.map(roundedFirst))
  assert.is(await needsExactFma(device), true)
  device.destroy()
})

s.run()
