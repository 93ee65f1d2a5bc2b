// shfl.sync's modes with register operands on WebGPU (emit-collective.ts), against the PTX ISA's pseudo-code
// (test/fixtures/emulator/shfl-modes.ts), in headless chromium (SwiftShader); the emulator's tiers run the
// same cases in test/emulator/shfl-modes.test.ts.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { KernelRunner } from '../helpers/kernel-runner.js'
import { startWebGpuPages, type PageBackend } from '../helpers/webgpu-page.js'
import { checkShflModes, shflModesPtx } from '../fixtures/emulator/shfl-modes.js'

const pages = await startWebGpuPages()
const s = suite<{ gpu?: PageBackend; k?: KernelRunner }>('WebGPU: shfl.sync up/down/bfly/idx with register operands', {})
s.before(async (ctx) => {
  ctx.gpu = await pages.open({ partial: true })
  ctx.k = await KernelRunner.load(ctx.gpu, shflModesPtx, 'compute_80', 'shfl modes (WebGPU)')
})
s.after(async (ctx) => {
  await ctx.gpu?.page.close()
  await pages.close()
})
s('every mode translates to WGSL', (ctx) => {
  assert.equal(ctx.gpu!.refused.map((x) => `${x.kernel}: ${x.reason}`), [])
})
s('values and predicates as the ISA gives them, offsets past 31 read by their low 5 bits', (ctx) => checkShflModes(ctx.k!))
s.run()
