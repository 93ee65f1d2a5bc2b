// test/fixtures/runtime/globals.cu compiled with nvcc (PTX, compute_80) and its manifest, with the libcuda
// test double told its kernels and variables (the driver would read them from the image).
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { KernelManifest } from '@kernelpack/offload'
import { readPtxManifest } from '@kernelpack/toolchain'
import { fixturesDir, tempDir, tool } from '../helpers/tools.js'
import { buildTestDouble, type TestDouble } from './libcuda-double.js'

export async function loadGlobalsFixture(): Promise<{ ptx: Buffer; manifest: KernelManifest; td: TestDouble }> {
  const td = buildTestDouble()
  const dir = tempDir('kp-globals-')
  execFileSync(tool('nvcc'), ['-ptx', '-arch=compute_80', join(fixturesDir, 'runtime', 'globals.cu'), '-o', join(dir, 'globals.ptx')], { stdio: 'pipe' })
  const ptx = readFileSync(join(dir, 'globals.ptx'))
  const manifest = await readPtxManifest(ptx.toString('utf8'))
  for (const k of manifest.kernels) td.defineKernel(k.name, k.params.map((p) => p.size))
  for (const v of manifest.variables) td.defineGlobal(v.name, v.size)
  return { ptx, manifest, td }
}
