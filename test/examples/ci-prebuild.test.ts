import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { execFileSync } from 'node:child_process'
import { readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { ImageKind, readOffloadBinaries } from '@kernelpack/offload'
import { tempDir, tool } from '../helpers/tools.js'
import { examplesDir, readBackend, readmeCommand, runReadme } from './run-example.js'

const test = suite('examples/ci-prebuild')

test('README command prebuilds sm_80, sm_90 and compute_90 through ccache and loads them with @kernelpack/runtime', async () => {
  tool('ccache')
  assert.match(readmeCommand('ci-prebuild'), 'pnpm build')
  const dir = join(examplesDir, 'ci-prebuild')
  rmSync(join(dir, 'prebuilds'), { recursive: true, force: true })
  const { stdout } = await runReadme('ci-prebuild')
  const offload = join(dir, 'prebuilds', 'sum-squares.offload')
  const entries = readOffloadBinaries(new Uint8Array(readFileSync(offload))).flatMap((b) => b.entries)
  assert.equal(entries.map((e) => [e.imageKind, e.strings.get('arch')]), [[ImageKind.Cubin, 'sm_80'], [ImageKind.Cubin, 'sm_90'], [ImageKind.PTX, 'sm_90']])
  // LLVM's own tool reads the shipped file: it extracts the PTX image byte for byte.
  const out = join(tempDir('kp-ci-prebuild-'), 'image')
  execFileSync(tool('llvm-offload-binary'), [offload, `--image=file=${out},arch=sm_90,kind=cuda`], { stdio: 'pipe' })
  const ptxFiles = [out, `${out}.0`].flatMap((f) => { try { return [readFileSync(f)] } catch { return [] } })
  assert.ok(ptxFiles.length > 0, 'llvm-offload-binary extracted an sm_90 image')
  const manifest = JSON.parse(readFileSync(join(dir, 'prebuilds', 'sum-squares.manifest.json'), 'utf8')) as { kernels: Array<{ name: string }> }
  assert.equal(manifest.kernels.map((k) => k.name), ['sumSquares'])
  assert.is(readBackend(stdout).images, 'cubin sm_80, cubin sm_90, ptx sm_90')
  let total = 0n
  for (let i = 0; i < 100_000; i++) total += BigInt(((i % 2001) - 1000) ** 2)
  assert.match(stdout, `sumSquares: 100000 values OK, total = ${total}`)
})

test.run()
