import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { spawnSync } from 'node:child_process'
import { copyFileSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { writeOffloadBinary } from '@kernelpack/offload'
import { tempDir, tool } from '../helpers/tools.js'
import { CHUNK } from '../../packages/cli/src/offload-file.js'
import { kernelpack, prng } from '../offload/cli-helpers.js'
import { offloadFixtures } from '../offload/helpers.js'

const input = (n: string) => readFileSync(join(offloadFixtures, 'inputs', n))
const same = (a: Uint8Array, b: Uint8Array, msg?: string) => assert.ok(Buffer.from(a).equals(Buffer.from(b)), msg)

/** A working directory holding a copy of b_cubin_ptx_2arch.bin one level up, as in commands.txt. */
function workDir(): string {
  const root = tempDir()
  mkdirSync(join(root, 'u'))
  copyFileSync(join(offloadFixtures, 'b_cubin_ptx_2arch.bin'), join(root, 'b_cubin_ptx_2arch.bin'))
  copyFileSync(join(offloadFixtures, 'a_one_cubin.bin'), join(root, 'a_one_cubin.bin'))
  return join(root, 'u')
}

const unpack = suite('kernelpack unpack')

unpack('the reference extractions of commands.txt', async () => {
  const dir = workDir()
  const run = (args: string[]) => kernelpack(['unpack', ...args], dir)
  assert.is((await run(['../a_one_cubin.bin', '--image=file=a.sm_90.cubin,triple=nvptx64-nvidia-cuda,arch=sm_90'])).code, 0)
  same(readFileSync(join(dir, 'a.sm_90.cubin')), input('extern_c.sm_90.cubin'))
  await run(['../b_cubin_ptx_2arch.bin', '--image=file=b.sm_90.cubin,arch=sm_90,kind=cuda'])
  same(readFileSync(join(dir, 'b.sm_90.cubin')), input('extern_c.sm_90.cubin'))
  await run(['../b_cubin_ptx_2arch.bin', '--image=file=b.sm_90.ptx,arch=sm_90,kind=openmp'])
  same(readFileSync(join(dir, 'b.sm_90.ptx')), input('extern_c.sm_90.s'))
  await run(['../b_cubin_ptx_2arch.bin', '--image=file=b.sm_80.cubin,arch=sm_80,producer=nvcc-13.0'])
  same(readFileSync(join(dir, 'b.sm_80.cubin')), input('extern_c.sm_80.cubin'))
  const last = await run(['../b_cubin_ptx_2arch.bin', '--image=file=b.sm_80.last.bin,arch=sm_80'])
  assert.match(last.stderr, /warning: Multiple inputs match to a single file, 'b.sm_80.last.bin'/)
  same(readFileSync(join(dir, 'b.sm_80.last.bin')), input('extern_c.sm_80.s'))
  // dup=1,2 cannot be selected: the selector is split on commas too.
  await run(['../b_cubin_ptx_2arch.bin', '--image=file=b.dup.s,dup=1,2'])
  await run(['../b_cubin_ptx_2arch.bin', '--image=arch=sm_90'])
  same(readFileSync(join(dir, 'b_cubin_ptx_2arch-nvptx64-nvidia-cuda-sm_90.0.cubin')), input('extern_c.sm_90.cubin'))
  same(readFileSync(join(dir, 'b_cubin_ptx_2arch-nvptx64-nvidia-cuda-sm_90.1.s')), input('extern_c.sm_90.s'))
  await run(['../b_cubin_ptx_2arch.bin', '--image=file=b.sm_80.a,arch=sm_80', '--archive'])
  same(readFileSync(join(dir, 'b.sm_80.a')), readFileSync(join(offloadFixtures, 'unpacked', 'b.sm_80.a')), 'archive identical to llvm-offload-binary --archive')
  assert.equal(readdirSync(dir).sort(), ['a.sm_90.cubin', 'b.sm_80.a', 'b.sm_80.cubin', 'b.sm_80.last.bin', 'b.sm_90.cubin', 'b.sm_90.ptx', 'b_cubin_ptx_2arch-nvptx64-nvidia-cuda-sm_90.0.cubin', 'b_cubin_ptx_2arch-nvptx64-nvidia-cuda-sm_90.1.s'])
})

unpack('default names, empty keys and kinds exactly as llvm-offload-binary writes them', async () => {
  const root = tempDir()
  writeFileSync(join(root, 'a.cubin'), 'abcd')
  writeFileSync(join(root, 'b.ptx'), 'xyz')
  writeFileSync(join(root, 'c.o'), new Uint8Array([0x42, 0x43, 0xc0, 0xde, 1, 2]))
  writeFileSync(join(root, 'noext'), 'q')
  const images = ['--image=file=a.cubin,triple=x,kind=sycl', '--image=file=c.o,triple=x', '--image=file=noext,triple=y,arch=z,foo', '--image=file=b.ptx,triple=q,,=v']
  assert.is(spawnSync(tool('llvm-offload-binary'), ['-o', 't2.bin', ...images], { cwd: root }).status, 0)
  const selectors = ['--image=triple=x', '--image=triple=y', '--image=triple=q', '--image=foo=', '--image=kind=sycl', '--image=file=one.out,triple=x', '--image=file=none.out,triple=nomatch']
  for (const who of ['ref', 'ours']) {
    mkdirSync(join(root, who))
    if (who === 'ref') assert.is(spawnSync(tool('llvm-offload-binary'), ['../t2.bin', ...selectors], { cwd: join(root, who) }).status, 0)
    else assert.is((await kernelpack(['unpack', '../t2.bin', ...selectors], join(root, who))).code, 0)
  }
  const ref = readdirSync(join(root, 'ref')).sort()
  assert.equal(readdirSync(join(root, 'ours')).sort(), ref)
  assert.ok(ref.includes('t2-x-.0.cubin') && ref.includes('t2-y-z.0.'), ref.join(' '))
  for (const f of ref) same(readFileSync(join(root, 'ours', f)), readFileSync(join(root, 'ref', f)), f)
})

unpack('large images are copied out of the file, not read whole', async () => {
  const dir = tempDir()
  const r = prng(7)
  const big = r.bytes(3 << 20)
  const small = r.bytes(100)
  const bin = writeOffloadBinary([
    { imageKind: 3, offloadKind: 2, strings: { triple: 't', arch: 'big' }, image: big },
    { imageKind: 5, offloadKind: 2, strings: { triple: 't', arch: 'small' }, image: small },
  ])
  writeFileSync(join(dir, 'big.bin'), bin)
  const res = await kernelpack(['unpack', 'big.bin', '--image=file=big.out,arch=big', '--image=file=small.out,arch=small'], dir)
  assert.is(res.code, 0, res.stderr)
  same(readFileSync(join(dir, 'big.out')), big)
  same(readFileSync(join(dir, 'small.out')), small)
})

unpack('images copied in several chunks from unaligned offsets, with a ragged tail', async () => {
  // A small first image puts the large ones at offsets that are not chunk multiples; the sizes come
  // from CHUNK so the copy loop's boundaries are crossed whatever its value.
  const dir = tempDir()
  const r = prng(12)
  const images = [r.bytes(13), r.bytes(CHUNK * 2 + 7), r.bytes(CHUNK + 1)]
  writeFileSync(join(dir, 'm.bin'), writeOffloadBinary(images.map((image, i) => ({ imageKind: 3, offloadKind: 2, strings: { triple: 't', arch: `a${i}` }, image }))))
  const res = await kernelpack(['unpack', 'm.bin', ...images.map((_, i) => `--image=file=o${i}.out,arch=a${i}`)], dir)
  assert.is(res.code, 0, res.stderr)
  images.forEach((image, i) => same(readFileSync(join(dir, `o${i}.out`)), image, `o${i}.out`))
  assert.equal(readdirSync(dir).sort(), ['m.bin', 'o0.out', 'o1.out', 'o2.out'])
})

unpack('compressed version 3 input', async () => {
  const dir = tempDir()
  const image = input('extern_c.sm_90.cubin')
  writeFileSync(join(dir, 'z.bin'), writeOffloadBinary([{ imageKind: 3, offloadKind: 2, strings: { triple: 't', arch: 'sm_90' }, image }], { version: 3, compression: 'zlib' }))
  const res = await kernelpack(['unpack', 'z.bin', '--image=file=out.cubin,arch=sm_90'], dir)
  assert.is(res.code, 0, res.stderr)
  same(readFileSync(join(dir, 'out.cubin')), image)
})

unpack('an ELF object with a .llvm.offloading section, like llvm-offload-binary reads it', async () => {
  const root = tempDir()
  writeFileSync(join(root, 'm.s'), '.text\n.globl main\nmain:\n  ret\n')
  const clang = spawnSync(tool('clang'), ['-c', 'm.s', '-o', 'm.o'], { cwd: root, encoding: 'utf8' })
  assert.is(clang.status, 0, clang.stderr)
  const objcopy = spawnSync(tool('llvm-objcopy'), ['--add-section', `.llvm.offloading=${join(offloadFixtures, 'b_cubin_ptx_2arch.bin')}`, '--set-section-type', '.llvm.offloading=0x6fff4c0b', 'm.o', 'host.o'], { cwd: root, encoding: 'utf8' })
  assert.is(objcopy.status, 0, objcopy.stderr)
  for (const who of ['ref', 'ours']) {
    mkdirSync(join(root, who))
    const args = ['../host.o', '--image=arch=sm_90', '--image=file=p.s,arch=sm_80,kind=cuda,feature=+ptx80']
    if (who === 'ref') assert.is(spawnSync(tool('llvm-offload-binary'), args, { cwd: join(root, who) }).status, 0)
    else assert.is((await kernelpack(['unpack', ...args], join(root, who))).code, 0)
  }
  const ref = readdirSync(join(root, 'ref')).sort()
  assert.equal(ref, ['host-nvptx64-nvidia-cuda-sm_90.0.cubin', 'host-nvptx64-nvidia-cuda-sm_90.1.s', 'p.s'])
  assert.equal(readdirSync(join(root, 'ours')).sort(), ref)
  for (const f of ref) same(readFileSync(join(root, 'ours', f)), readFileSync(join(root, 'ref', f)), f)
  const listed = await kernelpack(['inspect', 'host.o'], root)
  assert.match(listed.stdout, /host\.o: 4 binaries, 4 images/)
})

unpack('--archive output matches llvm-offload-binary (short and long member names, odd sizes) and reads back', async () => {
  const root = tempDir()
  const r = prng(99)
  const images = [1, 2, 3, 0, 17].map((n, i) => {
    writeFileSync(join(root, `i${i}.bin`), r.bytes(n))
    return `--image=file=i${i}.bin,triple=t,arch=${i % 2 ? 'odd' : 'even'}`
  })
  assert.is(spawnSync(tool('llvm-offload-binary'), ['-o', 'short.bin', ...images], { cwd: root }).status, 0)
  copyFileSync(join(root, 'short.bin'), join(root, 'a-rather-long-input-name.bin'))
  for (const input of ['short.bin', 'a-rather-long-input-name.bin']) {
    for (const sel of ['arch=odd', 'arch=even', 'triple=t']) {
      const args = [input, `--image=file=${input}.${sel}.ref.a,${sel}`, '--archive']
      assert.is(spawnSync(tool('llvm-offload-binary'), args, { cwd: root }).status, 0)
      const ours = await kernelpack(['unpack', input, `--image=file=${input}.${sel}.ours.a,${sel}`, '--archive'], root)
      assert.is(ours.code, 0, ours.stderr)
      same(readFileSync(join(root, `${input}.${sel}.ours.a`)), readFileSync(join(root, `${input}.${sel}.ref.a`)), `${input} ${sel}`)
    }
  }
  // An archive of offload binaries is read member by member, as llvm-offload-binary reads it.
  // Members that are plain images (or cubins without offload sections) hold no binaries: skipped.
  copyFileSync(join(offloadFixtures, 'unpacked', 'b.sm_80.a'), join(root, 'cubins.a'))
  const listed = await kernelpack(['inspect', 'short.bin.triple=t.ref.a', 'cubins.a'], root)
  assert.is(listed.code, 0, listed.stderr)
  assert.match(listed.stdout, /short\.bin\.triple=t\.ref\.a: 0 binaries, 0 images[\s\S]*cubins\.a: 0 binaries, 0 images/)
  const packedArchive = spawnSync(tool('llvm-ar'), ['rcD', 'bins.a', 'short.bin', 'a-rather-long-input-name.bin'], { cwd: root, encoding: 'utf8' })
  assert.is(packedArchive.status, 0, packedArchive.stderr)
  mkdirSync(join(root, 'ref'))
  mkdirSync(join(root, 'ours'))
  assert.is(spawnSync(tool('llvm-offload-binary'), ['../bins.a', '--image=arch=odd'], { cwd: join(root, 'ref') }).status, 0)
  assert.is((await kernelpack(['unpack', '../bins.a', '--image=arch=odd'], join(root, 'ours'))).code, 0)
  const ref = readdirSync(join(root, 'ref')).sort()
  assert.is(ref.length, 4)
  assert.equal(readdirSync(join(root, 'ours')).sort(), ref)
  for (const f of ref) same(readFileSync(join(root, 'ours', f)), readFileSync(join(root, 'ref', f)), f)
})

unpack('bad input and bad usage', async () => {
  const dir = workDir()
  writeFileSync(join(dir, 'not.bin'), 'hello world, this is not an offload binary at all')
  let res = await kernelpack(['unpack', 'not.bin', '--image=arch=x'], dir)
  assert.is(res.code, 1)
  assert.match(res.stderr, /not\.bin: not an offload binary: bad magic 68 65 6c 6c/)
  const cut = readFileSync(join(offloadFixtures, 'a_one_cubin.bin')).subarray(0, 5000)
  writeFileSync(join(dir, 'cut.bin'), cut)
  res = await kernelpack(['unpack', 'cut.bin', '--image=arch=x'], dir)
  assert.is(res.code, 1)
  assert.match(res.stderr, /cut\.bin: offload binary truncated.*file offset 8/)
  res = await kernelpack(['unpack', 'missing.bin', '--image=arch=x'], dir)
  assert.is(res.code, 1)
  assert.match(res.stderr, /'missing.bin': no such file/)
  res = await kernelpack(['unpack', '../a_one_cubin.bin', '-o', 'x'], dir)
  assert.is(res.code, 2)
  res = await kernelpack(['unpack'], dir)
  assert.is(res.code, 2)
  res = await kernelpack(['unpack', '../a_one_cubin.bin'], dir)
  assert.is(res.code, 0)
  assert.match(res.stderr, /nothing extracted/)
  res = await kernelpack(['unpack', '../a_one_cubin.bin', '--image=arch=sm_90', '--archive'], dir)
  assert.is(res.code, 1)
  assert.match(res.stderr, /--archive needs a file=/)
  assert.equal(readdirSync(dir).sort(), ['cut.bin', 'not.bin'])
})

unpack('default names built from the binary\'s own triple/arch stay in the working directory (issue 17 item 2)', async () => {
  const root = tempDir()
  const dir = join(root, 'a', 'b', 'c', 'd')
  mkdirSync(dir, { recursive: true })
  // a triple of `x/../../../../ESCAPED` resolved against the working directory lands in root/ESCAPED-…
  const bin = writeOffloadBinary([
    { imageKind: 3, offloadKind: 2, flags: 0, strings: new Map([['triple', 'x/../../../../ESCAPED'], ['arch', 'sm_80']]), image: new Uint8Array([1, 2, 3]) },
  ])
  writeFileSync(join(dir, 'evil.bin'), bin)
  const r = await kernelpack(['unpack', 'evil.bin', '--image=arch=sm_80'], dir)
  assert.is(r.code, 1)
  assert.match(r.stderr, /evil\.bin: image 0 has triple "x\/\.\.\/\.\.\/\.\.\/\.\.\/ESCAPED", which contains a path separator/)
  assert.match(r.stderr, /--image=arch=sm_80,file=NAME/)
  assert.equal(readdirSync(root).sort(), ['a'], 'nothing written outside the working directory')
  assert.equal(readdirSync(dir), ['evil.bin'], 'nothing written at all')
  // an arch of `..` and a backslash are refused the same way; file= is the user's own choice and is honoured
  for (const [triple, arch, why] of [['nvptx64', '..', /contains "\.\."/], ['a\\b', 'sm_80', /path separator/]] as const) {
    writeFileSync(join(dir, 'e2.bin'), writeOffloadBinary([{ imageKind: 3, offloadKind: 2, flags: 0, strings: new Map([['triple', triple], ['arch', arch]]), image: new Uint8Array([9]) }]))
    const r2 = await kernelpack(['unpack', 'e2.bin', `--image=triple=${triple}`], dir)
    assert.is(r2.code, 1)
    assert.match(r2.stderr, why)
  }
  const r3 = await kernelpack(['unpack', 'evil.bin', '--image=arch=sm_80,file=../mine.cubin'], dir)
  assert.is(r3.code, 0, r3.stderr)
  assert.equal([...readFileSync(join(root, 'a', 'b', 'c', 'mine.cubin'))], [1, 2, 3])
})

unpack.run()
