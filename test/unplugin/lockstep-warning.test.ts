// The plugin's warning for kernels whose lanes talk through memory with no __syncwarp() (issue 33 item 4):
// test/fixtures/emulator/lockstep.cu, built by nvcc with line information through the plugin's context, warns
// once per such kernel at the .cu line of the access (the inlined function's line, and the call site) when
// the build may run on WebGPU (`backend: 'webgpu'` or `'auto'`), and not for the kernel whose lanes keep to
// their own elements, nor with `backend: 'emulator'` or `'cuda'`, where warps run in lockstep.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { copyFileSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { createContext } from 'unplugin-cuda'
import { fixturesDir, tempDir, tool } from '../helpers/tools.js'

const root = tempDir('kp-lockstep-warn-')
const file = join(root, 'lockstep.cu')
copyFileSync(join(fixturesDir, 'emulator', 'lockstep.cu'), file)
const lines = readFileSync(file, 'utf8').split('\n')
const lineOf = (text: string) => lines.findIndex((l) => l.includes(text)) + 1
const cacheDir = tempDir('kp-lockstep-warn-cache-')

async function warningsFor(backend: 'webgpu' | 'auto' | 'emulator' | 'cuda'): Promise<string[]> {
  const ctx = createContext({ arch: 'compute_80', compiler: tool('nvcc'), lineinfo: true, dts: false, cacheDir, backend }, root)
  const warnings: string[] = []
  ctx.logger = { info: () => {}, warn: (m) => warnings.push(m) }
  await ctx.build(file)
  return warnings
}

const s = suite('plugin: kernels whose lanes talk with no __syncwarp()')

s('backend webgpu: one warning per such kernel, at the .cu line, with the fix', async () => {
  const w = await warningsFor('webgpu')
  const kernels = ['reduce_unroll_last', 'reduce_unrolled_256', 'reduce_unrolled_64', 'reduce_many_128', 'warp_scan_volatile', 'neighbour_read', 'same_address_store']
  for (const k of kernels) assert.is(w.filter((m) => m.includes(`kernel ${k}:`)).length, 1, `${k}:\n${w.join('\n')}`)
  assert.not.ok(w.some((m) => m.includes('own_elements')), w.join('\n'))
  // the unrolled last warp is inlined: its own line, and the call site
  const last = w.find((m) => m.includes('kernel reduce_unroll_last:'))!
  assert.match(last, new RegExp(`^unplugin-cuda: lockstep\\.cu:(${lineOf('acc[t] += acc[t + 32]')}|${lineOf('acc[t] += acc[t + 16]')}) \\(inlined at lockstep\\.cu:${lineOf('if (t < 32) last_warp_sum<64>(acc, t);')}\\), PTX line \\d+: `), last)
  assert.match(last, /put __syncwarp\(\) between the store and the load/)
  const neighbour = w.find((m) => m.includes('kernel neighbour_read:'))!
  assert.match(neighbour, new RegExp(`lockstep\\.cu:(${lineOf('s[threadIdx.x] = threadIdx.x * 3 + 1;')}|${lineOf('out[threadIdx.x] = s[(threadIdx.x + 1) % 64];')}), PTX line`), neighbour)
})

s('backend auto warns too (a browser may pick WebGPU); emulator and cuda do not', async () => {
  assert.ok((await warningsFor('auto')).length >= 7)
  assert.equal(await warningsFor('emulator'), [])
  assert.equal(await warningsFor('cuda'), [])
})

s.run()
