// 200 generated cases packed by llvm-offload-binary and by kernelpack pack must give identical bytes,
// and unpacking either output (with the other tool) must give back the original image files.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { tempDir, tool } from '../helpers/tools.js'
import { kernelpack, prng, spawnAll } from '../offload/cli-helpers.js'

const CASES = 200
const exts = ['.cubin', '.s', '.bc', '.o', '.fatbin', '.ptx'] as const
const keyChars = 'abcdefghijklmnopqrstuvwxyz_0123456789+.-'

interface Image { files: { name: string; bytes: Uint8Array }[]; arg: string; uid: string }
interface Case { dir: string; images: Image[] }

function makeCase(i: number, root: string): Case {
  const r = prng(1000 + i)
  const dir = join(root, `c${i}`)
  mkdirSync(dir)
  const word = (lo: number, hi: number, chars = keyChars) => Array.from({ length: r.int(lo, hi) }, () => r.pick([...chars])).join('')
  const images: Image[] = []
  const count = r.int(1, 6)
  for (let j = 0; j < count; j++) {
    const uid = `${i}.${j}`
    const files: Image['files'] = []
    const nfiles = r.chance(0.15) ? 2 : 1
    for (let f = 0; f < nfiles; f++) {
      const len = r.pick([0, r.int(1, 16), r.int(17, 600), r.int(600, 5000)])
      const bytes = r.bytes(len)
      const ext = r.pick(exts)
      // Some .o/.bc files carry the bitcode magic, which overrides the extension.
      if (len >= 4 && r.chance(0.2)) bytes.set([0x42, 0x43, 0xc0, 0xde])
      const name = `img${j}_${f}${ext}`
      writeFileSync(join(dir, name), bytes)
      files.push({ name, bytes })
    }
    const pairs: string[] = files.map((f) => `file=${f.name}`)
    pairs.push(`triple=${r.pick(['nvptx64-nvidia-cuda', 'amdgcn-amd-amdhsa', 'spirv64', ''])}`)
    pairs.push(`arch=${r.pick(['sm_80', 'sm_90', 'sm_90a', 'gfx90a', ''])}`)
    if (r.chance(0.7)) pairs.push(`kind=${r.pick(['cuda', 'openmp', 'hip', 'sycl', 'bogus'])}`)
    pairs.push(`uid=${uid}`)
    const extra = r.int(0, 6)
    for (let k = 0; k < extra; k++) {
      // Keys of every length class the hash treats differently, values empty or with "=".
      const key = r.chance(0.1) ? word(33, 80) : word(1, 12)
      const value = r.pick(['', word(1, 20), `${word(1, 5)}=${word(0, 5)}`, word(17, 40)])
      pairs.push(`${key}=${value}`)
      if (r.chance(0.1)) pairs.push(`${key}=${word(0, 4)}`) // repeated key: values joined with ","
    }
    if (r.chance(0.05)) pairs.push(word(1, 6)) // a key without "=" has an empty value
    // Shuffle (file first keeps most cases like real use; the rest in random order).
    const rest = pairs.slice(nfiles)
    for (let k = rest.length - 1; k > 0; k--) {
      const m = r.int(0, k)
      ;[rest[k], rest[m]] = [rest[m]!, rest[k]!]
    }
    images.push({ files, uid, arg: [...pairs.slice(0, nfiles), ...rest].join(',') })
  }
  return { dir, images }
}

const test = suite('pack and unpack versus llvm-offload-binary')
const root = tempDir('kp-pack-diff-')
const cases = Array.from({ length: CASES }, (_, i) => makeCase(i, root))
const llvm = tool('llvm-offload-binary')

test(`${CASES} generated cases pack to identical bytes`, async () => {
  let mismatches = 0
  const refs = await spawnAll(cases.map((c) => ({ cmd: llvm, args: ['-o', 'ref.bin', ...c.images.map((im) => `--image=${im.arg}`)], cwd: c.dir })))
  for (const [i, c] of cases.entries()) {
    const args = c.images.map((im) => `--image=${im.arg}`)
    assert.is(refs[i]!.status, 0, refs[i]!.stderr)
    const ours = await kernelpack(['pack', '-o', 'ours.bin', ...args], c.dir)
    assert.is(ours.code, 0, ours.stderr)
    const a = readFileSync(join(c.dir, 'ref.bin'))
    const b = readFileSync(join(c.dir, 'ours.bin'))
    if (!a.equals(b)) {
      mismatches++
      if (mismatches <= 3) console.error(`case ${c.dir}: ${args.join(' ')}`)
    }
  }
  assert.is(mismatches, 0, `${mismatches} of ${CASES} cases differ`)
})

test('unpack of either output gives the original images back', async () => {
  // uid selects exactly one --image; with two files the last one is written (and warned about).
  const select = (c: Case, prefix: string) => c.images.map((im) => `--image=file=${prefix}_${im.uid}.out,uid=${im.uid}`)
  // llvm-offload-binary unpacks kernelpack's output (every 4th case: the outputs are identical anyway,
  // and each spawn costs); kernelpack unpacks llvm-offload-binary's output in every case.
  const checked = cases.filter((_, i) => i % 4 === 0)
  const refs = await spawnAll(checked.map((c) => ({ cmd: llvm, args: ['ours.bin', ...select(c, 'ref')], cwd: c.dir })))
  refs.forEach((r) => assert.is(r.status, 0, r.stderr))
  for (const [i, c] of cases.entries()) {
    const ours = await kernelpack(['unpack', 'ref.bin', ...select(c, 'ours')], c.dir)
    assert.is(ours.code, 0, ours.stderr)
    for (const im of c.images) {
      const want = im.files[im.files.length - 1]!.bytes
      for (const prefix of i % 4 === 0 ? ['ref', 'ours'] : ['ours']) {
        const got = readFileSync(join(c.dir, `${prefix}_${im.uid}.out`))
        assert.ok(got.equals(want), `${c.dir} ${prefix} ${im.uid}`)
      }
      assert.is(im.files.length > 1, ours.stderr.includes(`'ours_${im.uid}.out'`), 'warns exactly when several images match one file')
    }
  }
})

test.run()
