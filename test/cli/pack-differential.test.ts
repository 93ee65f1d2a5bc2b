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

// Every --image becomes its own complete binary and they are concatenated, so packing BATCH cases in
// one llvm-offload-binary run gives exactly the concatenation of their separate outputs. Batching
// keeps the number of process spawns (each loads libLLVM) low; every case is still compared alone.
const BATCH = 10
const batches = Array.from({ length: CASES / BATCH }, (_, b) => cases.slice(b * BATCH, (b + 1) * BATCH))
const imageArgs = (c: Case, prefix: string) => c.images.map((im) => `--image=${im.arg.replace(/(^|,)file=/g, `$1file=${prefix}`)}`)

test(`${CASES} generated cases pack to identical bytes`, async () => {
  const refs = await spawnAll(batches.map((cs, b) => ({ cmd: llvm, args: ['-o', `ref${b}.bin`, ...cs.flatMap((c) => imageArgs(c, `c${cases.indexOf(c)}/`))], cwd: root })))
  let mismatches = 0
  for (const [b, cs] of batches.entries()) {
    assert.is(refs[b]!.status, 0, refs[b]!.stderr)
    const ref = readFileSync(join(root, `ref${b}.bin`))
    let at = 0
    for (const c of cs) {
      const args = imageArgs(c, '')
      const ours = await kernelpack(['pack', '-o', 'ours.bin', ...args], c.dir)
      assert.is(ours.code, 0, ours.stderr)
      const mine = readFileSync(join(c.dir, 'ours.bin'))
      writeFileSync(join(c.dir, 'ref.bin'), ref.subarray(at, at + mine.length))
      if (!ref.subarray(at, at + mine.length).equals(mine)) {
        mismatches++
        if (mismatches <= 3) console.error(`case ${c.dir}: ${args.join(' ')}`)
      }
      at += mine.length
    }
    assert.is(at, ref.length, `batch ${b}: sizes add up`)
  }
  assert.is(mismatches, 0, `${mismatches} of ${CASES} cases differ`)
})

test('unpack of either output gives the original images back', async () => {
  // uid selects exactly one --image; with two files the last one is written (and warned about).
  const select = (c: Case, prefix: string) => c.images.map((im) => `--image=file=${prefix}_${im.uid}.out,uid=${im.uid}`)
  // llvm-offload-binary unpacks the concatenation of kernelpack's outputs (uids are unique across
  // cases); kernelpack unpacks each case's llvm-offload-binary output.
  for (const [b, cs] of batches.entries()) writeFileSync(join(root, `ours${b}.bin`), Buffer.concat(cs.map((c) => readFileSync(join(c.dir, 'ours.bin')))))
  const refs = await spawnAll(batches.map((cs, b) => ({ cmd: llvm, args: [`ours${b}.bin`, ...cs.flatMap((c) => select(c, `c${cases.indexOf(c)}/ref`))], cwd: root })))
  refs.forEach((r) => assert.is(r.status, 0, r.stderr))
  for (const c of cases) {
    const ours = await kernelpack(['unpack', 'ref.bin', ...select(c, 'ours')], c.dir)
    assert.is(ours.code, 0, ours.stderr)
    for (const im of c.images) {
      const want = im.files[im.files.length - 1]!.bytes
      for (const prefix of ['ref', 'ours']) {
        const got = readFileSync(join(c.dir, `${prefix}_${im.uid}.out`))
        assert.ok(got.equals(want), `${c.dir} ${prefix} ${im.uid}`)
      }
      assert.is(im.files.length > 1, ours.stderr.includes(`'ours_${im.uid}.out'`), 'warns exactly when several images match one file')
    }
  }
})

test.run()
