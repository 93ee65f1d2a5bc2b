// clang 22 with CUDA 13 needs the toolkit's include/cccl (cuda/std/…, nv/target) for cooperative_groups.h,
// cuda/pipeline and cuda/barrier; nvcc adds it itself, so the toolchain adds it for clang (issue 14, item 2).
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { mkdirSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { buildCudaFile, compileArgs, findCompiler, parseArchSpec, resolveOptions } from '@kernelpack/toolchain'
import { fixturesDir, tempDir, tool } from '../helpers/tools.js'

const file = join(fixturesDir, 'toolchain', 'cccl', 'warp-sum.cu')
const cudaPath = dirname(dirname(tool('nvcc')))
const [target] = parseArchSpec('compute_80')
const io = { input: file, output: '<out>', depfile: '<deps>', includeDirs: ['/user/include'] }

const cccl = suite('clang: the toolkit include/cccl folder')

cccl('cooperative_groups.h and cuda/pipeline compile with clang 22 as with nvcc', async () => {
  for (const compiler of [tool('clang++'), 'nvcc']) {
    const r = await buildCudaFile(file, { arch: 'compute_80', compiler, cacheDir: false })
    assert.equal(r.manifest.kernels.map((k) => k.name), ['_Z8warp_sumPKfPf'], compiler)
    // clang lists the system headers it read (-MD): the CCCL ones came from that folder.
    if (compiler !== 'nvcc') assert.ok(r.dependencies.some((d) => d.startsWith(join(cudaPath, 'include', 'cccl') + '/')), 'no dependency under include/cccl')
  }
})

cccl('-isystem <toolkit>/include/cccl, searched after the user\'s -I folders', async () => {
  const clang = await findCompiler(tool('clang++'), { cudaPath })
  const args = compileArgs(clang, target!, resolveOptions({}), io)
  const at = args.indexOf('-isystem')
  assert.ok(at >= 0, args.join(' '))
  assert.is(args[at + 1], join(cudaPath, 'include', 'cccl'))
  assert.ok(args.includes('/user/include'))
})

cccl('a toolkit without include/cccl (CUDA 12 and older keep cuda/std in include/) gets no such flag', async () => {
  const old = tempDir('kp-cuda12-')
  mkdirSync(join(old, 'include', 'cuda', 'std'), { recursive: true })
  const clang = await findCompiler(tool('clang++'), { cudaPath })
  const args = compileArgs({ ...clang, cudaPath: old }, target!, resolveOptions({}), io)
  assert.not.ok(args.includes('-isystem'), args.join(' '))
})

cccl.run()
