// `kernelpack build`: outputs on disk equal buildCudaFile's, -I/-D/--arch reach the compiler, compile
// errors exit 1 with file:line:col from nvcc and clang, --emit writes the codegen outputs.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { buildCudaFile } from '@kernelpack/toolchain'
import { main, type CliIO } from '../../packages/cli/src/main.js'
import { fixturesDir, tempDir, tool } from '../helpers/tools.js'

const cu = join(fixturesDir, 'reference-cu')
const work = tempDir('kp-cli-build-')
const cache = join(work, 'cache')
for (const f of ['structs.cu', 'extern_c.cu', 'bad.cu']) copyFileSync(join(cu, f), join(work, f))
tool('nvcc')

async function kp(args: string[]) {
  const out = { stdout: '', stderr: '' }
  const io: CliIO = { stdout: (t) => (out.stdout += t), stderr: (t) => (out.stderr += t), cwd: work }
  const code = await main(['build', ...args], io)
  return { code, ...out }
}

// ---

const build = suite('kernelpack build')

build('writes DIR/<name>.offload and DIR/<name>.manifest.json, equal to buildCudaFile\'s results', async () => {
  const r = await kp(['structs.cu', 'extern_c.cu', '--arch', '80-real;90', '-o', 'out', '--cache-dir', cache])
  assert.is(r.code, 0, r.stderr)
  for (const name of ['structs', 'extern_c']) {
    const api = await buildCudaFile(`${name}.cu`, { arch: '80-real;90', cacheDir: cache, cwd: work })
    assert.equal(api.stats.compiles, 0, 'the CLI filled the same cache')
    assert.ok(readFileSync(join(work, 'out', `${name}.offload`)).equals(Buffer.from(api.offload)), name)
    assert.equal(JSON.parse(readFileSync(join(work, 'out', `${name}.manifest.json`), 'utf8')), api.manifest)
    assert.match(r.stdout, new RegExp(`${name}\\.cu → out/${name}\\.offload, out/${name}\\.manifest\\.json \\(sm_80, sm_90, compute_90; \\d+ kernels?\\)`))
  }
})

build('-I, -D and --arch reach the compiler', async () => {
  mkdirSync(join(work, 'inc'), { recursive: true })
  writeFileSync(join(work, 'inc', 'cfg.h'), '#define FROM_HEADER 1\n')
  writeFileSync(join(work, 'flags.cu'), '#include "cfg.h"\n#if VAL != 7 || !defined(FLAG) || !FROM_HEADER\n#error flags did not arrive\n#endif\nextern "C" __global__ void k(int *p) { p[0] = VAL; }\n')
  const ok = await kp(['flags.cu', '-I', 'inc', '-D', 'VAL=7', '-DFLAG', '--arch', 'compute_80', '-o', 'out', '--cache-dir', cache])
  assert.is(ok.code, 0, ok.stderr)
  const m = JSON.parse(readFileSync(join(work, 'out', 'flags.manifest.json'), 'utf8'))
  assert.equal(m.targets.map((t: { arch: string }) => t.arch), ['compute_80'])
  assert.equal(m.kernels.map((k: { name: string }) => k.name), ['k'])
  const bad = await kp(['flags.cu', '-I', 'inc', '-D', 'VAL=8', '--arch', 'compute_80', '-o', 'out', '--cache-dir', cache])
  assert.is(bad.code, 1)
  assert.match(bad.stderr, /flags\.cu:3:\d+: error: .*flags did not arrive/)
})

build('a compile error exits 1 with the compiler\'s messages at bad.cu:LINE:COL (nvcc and clang)', async () => {
  const nv = await kp(['bad.cu', '--arch', 'compute_80', '-o', 'out', '--no-cache'])
  assert.is(nv.code, 1)
  // Places as nvcc reports them (reference log shared/reference/nvcc/bad.ptx.log: line 9, caret under `if`).
  assert.match(nv.stderr, /^bad\.cu:9:5: error: expected a ";"$/m)
  assert.match(nv.stderr, /^ {6}if \(i < n\) \{$/m)
  const cl = await kp(['bad.cu', '--arch', 'compute_80', '-o', 'out', '--no-cache', '--compiler', tool('clang++')])
  assert.is(cl.code, 1)
  // shared/reference/clang/bad.log: bad.cu:8:50 and bad.cu:13:46.
  assert.match(cl.stderr, /^bad\.cu:8:50: error: expected ';' at end of declaration$/m)
  assert.match(cl.stderr, /^bad\.cu:13:46: error: expected '\}'$/m)
  assert.not.ok(existsSync(join(work, 'out', 'bad.offload')))
})

build('--emit wrapper-c,hostrefs writes the wrapper and host-reference C beside the offload', async () => {
  const r = await kp(['extern_c.cu', '--arch', '80-real;90', '-o', 'emit', '--cache-dir', cache, '--emit', 'wrapper-c,hostrefs'])
  assert.is(r.code, 0, r.stderr)
  for (const f of ['extern_c.offload', 'extern_c.manifest.json', 'extern_c.wrapper.c', 'extern_c.wrapper.h', 'extern_c.hostrefs.c']) assert.ok(existsSync(join(work, 'emit', f)), f)
  // The same wrapper as `kernelpack wrapper` makes from the written files.
  const out = { stdout: '', stderr: '' }
  const io: CliIO = { stdout: (t) => (out.stdout += t), stderr: (t) => (out.stderr += t), cwd: work }
  assert.is(await main(['wrapper', '--offload', 'emit/extern_c.offload', '--manifest', 'emit/extern_c.manifest.json', '-o', 'emit/ref.c'], io), 0, out.stderr)
  assert.is(readFileSync(join(work, 'emit', 'extern_c.wrapper.c'), 'utf8'), readFileSync(join(work, 'emit', 'ref.c'), 'utf8'))
  const hostrefs = readFileSync(join(work, 'emit', 'extern_c.hostrefs.c'), 'utf8')
  assert.match(hostrefs, /\.nvHRKE/)
  assert.match(hostrefs, /\/\* saxpy \*\//)
})

build('a failed build of a file leaves none of its previous outputs in -o; other files are still written (issue 17 item 9)', async () => {
  writeFileSync(join(work, 'edited.cu'), 'extern "C" __global__ void edited(int *p) { p[0] = 1; }\n')
  const ok = await kp(['edited.cu', 'extern_c.cu', '--arch', 'compute_80', '-o', 'stale', '--cache-dir', cache, '--emit', 'wrapper-c,hostrefs'])
  assert.is(ok.code, 0, ok.stderr)
  const outputs = ['edited.offload', 'edited.manifest.json', 'edited.wrapper.c', 'edited.wrapper.h', 'edited.hostrefs.c']
  for (const f of outputs) assert.ok(existsSync(join(work, 'stale', f)), f)
  // the next edit does not compile: the old image must not stay behind for the next step to ship
  writeFileSync(join(work, 'edited.cu'), 'extern "C" __global__ void edited(int *p) { p[0] = 1 }\n')
  const bad = await kp(['edited.cu', 'extern_c.cu', '--arch', 'compute_80', '-o', 'stale', '--cache-dir', cache])
  assert.is(bad.code, 1)
  assert.match(bad.stderr, /edited\.cu:1:\d+: error/)
  for (const f of outputs) assert.not.ok(existsSync(join(work, 'stale', f)), `${f} was removed`)
  assert.ok(existsSync(join(work, 'stale', 'extern_c.offload')), 'the file that compiled is written')
  assert.equal(readdirSync(join(work, 'stale')).filter((n) => n.endsWith('.tmp')), [])
})

build('bad usage exits 2, bad arch exits 1, both say what to do', async () => {
  assert.is((await kp(['-o', 'out'])).code, 2)
  assert.is((await kp(['structs.cu'])).code, 2)
  assert.match((await kp(['structs.cu', '-o', 'out', '--emit', 'ptx'])).stderr, /--emit ptx: expected wrapper-c and\/or hostrefs/)
  const size = await kp(['structs.cu', '-o', 'out', '--cache-size', 'big'])
  assert.is(size.code, 2)
  assert.match(size.stderr, /--cache-size "big" is not a size: write it as ccache's max_size, e\.g\. 5G, 500M, 2Gi, or 0 for no limit/)
  const arch = await kp(['structs.cu', '-o', 'out', '--arch', 'banana', '--no-cache'])
  assert.is(arch.code, 1)
  assert.match(arch.stderr, /bad GPU arch 'banana'/)
  assert.match((await kp(['--help'])).stdout, /Usage: kernelpack build/)
})

build.run()
