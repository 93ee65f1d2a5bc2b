import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { tempDir, tool } from '../helpers/tools.js'
import { CHUNK } from '../../packages/cli/src/offload-file.js'
import { kernelpack, prng } from '../offload/cli-helpers.js'
import { offloadFixtures } from '../offload/helpers.js'

const pack = suite('kernelpack pack')

// The --image arguments of the reference corpus (commands.txt), run from the fixture directory.
const reference: [string, string[]][] = [
  ['a_one_cubin.bin', ['--image=file=inputs/extern_c.sm_90.cubin,triple=nvptx64-nvidia-cuda,arch=sm_90,kind=cuda']],
  ['b_cubin_ptx_2arch.bin', [
    '--image=file=inputs/extern_c.sm_80.cubin,triple=nvptx64-nvidia-cuda,arch=sm_80,kind=cuda,feature=+ptx80,producer=nvcc-13.0',
    '--image=file=inputs/extern_c.sm_80.s,triple=nvptx64-nvidia-cuda,arch=sm_80,kind=cuda,feature=+ptx80',
    '--image=file=inputs/extern_c.sm_90.cubin,triple=nvptx64-nvidia-cuda,arch=sm_90,kind=cuda,feature=+ptx85,producer=nvcc-13.0,note=hello',
    '--image=file=inputs/extern_c.sm_90.s,triple=nvptx64-nvidia-cuda,arch=sm_90,kind=openmp,feature=+ptx85,dup=1,dup=2',
  ]],
  ['b2_multi_file_one_image_arg.bin', ['--image=file=inputs/extern_c.sm_80.cubin,file=inputs/extern_c.sm_80.s,triple=nvptx64-nvidia-cuda,arch=sm_80,kind=cuda']],
  ['c_empty.bin', ['--image=file=inputs/empty.cubin,triple=nvptx64-nvidia-cuda,arch=sm_90,kind=cuda']],
  ['d_tailmerge.bin', ['--image=file=inputs/extern_c.sm_90.ptx,triple=nvptx64-nvidia-cuda,arch=sm_90,kind=cuda,alias=cuda,self=arch,z=']],
]

pack('reproduces every reference binary of the corpus byte for byte', async () => {
  const out = tempDir()
  for (const [name, images] of reference) {
    const r = await kernelpack(['pack', '-o', join(out, name), ...images], offloadFixtures)
    assert.is(r.code, 0, r.stderr)
    assert.ok(readFileSync(join(out, name)).equals(readFileSync(join(offloadFixtures, name))), name)
  }
})

pack('accepts the option spellings LLVM cl accepts', async () => {
  const out = tempDir()
  const image = reference[0]![1][0]!.slice('--image='.length)
  for (const args of [['-o=' + join(out, 'x.bin'), '-image=' + image], ['--o', join(out, 'x.bin'), '--image', image]]) {
    const r = await kernelpack(['pack', ...args], offloadFixtures)
    assert.is(r.code, 0, r.stderr)
    assert.ok(readFileSync(join(out, 'x.bin')).equals(readFileSync(join(offloadFixtures, 'a_one_cubin.bin'))))
  }
})

pack('without --image it writes an empty file, as llvm-offload-binary does', async () => {
  const dir = tempDir()
  const ref = spawnSync(tool('llvm-offload-binary'), ['-o', 'ref.bin'], { cwd: dir })
  assert.is(ref.status, 0)
  const r = await kernelpack(['pack', '-o', 'ours.bin'], dir)
  assert.is(r.code, 0)
  assert.is(readFileSync(join(dir, 'ours.bin')).length, readFileSync(join(dir, 'ref.bin')).length)
})

pack('errors name the problem and write nothing', async () => {
  const dir = tempDir()
  writeFileSync(join(dir, 'k.cubin'), 'x')
  let r = await kernelpack(['pack', '-o', 'o.bin', '--image=triple=t,arch=a'], dir)
  assert.is(r.code, 1)
  assert.match(r.stderr, /'file' is a required image argument/)
  r = await kernelpack(['pack', '-o', 'o.bin', '--image=file=k.cubin,triple=t', '--image=file=missing.cubin,triple=t'], dir)
  assert.is(r.code, 1)
  assert.match(r.stderr, /cannot read image file 'missing.cubin': no such file/)
  r = await kernelpack(['pack', '--image=file=k.cubin'], dir)
  assert.is(r.code, 2)
  assert.match(r.stderr, /missing -o/)
  r = await kernelpack(['pack', 'in.bin', '-o', 'o.bin'], dir)
  assert.is(r.code, 2)
  assert.match(r.stderr, /mutually exclusive/)
  r = await kernelpack(['pack', '-o', 'no/such/dir/o.bin', '--image=file=k.cubin,triple=t'], dir)
  assert.is(r.code, 1)
  assert.match(r.stderr, /cannot write '.*no\/such\/dir\/o.bin': its directory does not exist/)
  r = await kernelpack(['pack', '-o', 'o.bin', '--bogus'], dir)
  assert.is(r.code, 2)
  assert.equal(readdirSync(dir), ['k.cubin'])
})

pack('writes through a temporary file and leaves none behind', async () => {
  const dir = tempDir()
  writeFileSync(join(dir, 'k.cubin'), new Uint8Array(100_000).fill(3))
  const r = await kernelpack(['pack', '-o', 'o.bin', '--image=file=k.cubin,triple=t,arch=a'], dir)
  assert.is(r.code, 0)
  assert.equal(readdirSync(dir).sort(), ['k.cubin', 'o.bin'])
  assert.ok(existsSync(join(dir, 'o.bin')))
})

pack('images spanning several copy chunks, with a ragged tail, match llvm-offload-binary', async () => {
  // Sizes from the copy chunk itself, so the chunked loop's boundaries (exact multiple, one byte
  // over, a ragged tail) are all crossed whatever CHUNK is; compared with the real tool.
  const dir = tempDir()
  const r = prng(11)
  const sizes = [CHUNK * 2, CHUNK + 1, CHUNK * 2 + 12_345]
  sizes.forEach((n, i) => writeFileSync(join(dir, `k${i}.cubin`), r.bytes(n)))
  const images = sizes.map((_, i) => `--image=file=k${i}.cubin,triple=nvptx64-nvidia-cuda,arch=sm_${80 + i}`)
  const ours = await kernelpack(['pack', '-o', 'ours.bin', ...images], dir)
  assert.is(ours.code, 0, ours.stderr)
  const ref = spawnSync(tool('llvm-offload-binary'), ['-o', 'ref.bin', ...images], { cwd: dir, encoding: 'utf8' })
  assert.is(ref.status, 0, ref.stderr)
  assert.ok(readFileSync(join(dir, 'ours.bin')).equals(readFileSync(join(dir, 'ref.bin'))))
})

pack('--help', async () => {
  const r = await kernelpack(['pack', '--help'], tempDir())
  assert.is(r.code, 0)
  assert.match(r.stdout, /--image=/)
})

pack.run()
