// A compile cache shared by a CI fleet (issue 16 item 6): ccache 4.7 in front of the compiler (`--launcher
// ccache`, the plugin's `launcher`) with its remote storage on a redis-server on the loopback address. Two
// "machines", each with a fresh CCACHE_DIR, a fresh kernelpack cache and its own checkout folder
// (CCACHE_BASEDIR): machine A compiles and uploads, machine B's compiles are remote hits, and both write
// byte-identical outputs. nvcc and clang (ccache takes both); kernelpack's own cache then answers B's rebuild
// without running ccache at all. CI starts one redis-server and names it in $KERNELPACK_TEST_REDIS; elsewhere
// the test starts its own on a free loopback port. Each run compiles a source no run compiled before (a nonce
// in a declaration: ccache's preprocessor mode does not see comments), so a shared server's older entries
// cannot make A's compile a hit.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { repoRoot, tool } from '../helpers/tools.js'
import { build } from '../helpers/bundlers.js'

const ccache = tool('ccache')
tool('nvcc')
tool('clang++')
const redisServer = process.env.KERNELPACK_TEST_REDIS ? '' : tool('redis-server')

async function freePort(): Promise<number> {
  const srv = createServer()
  await new Promise<void>((ok) => srv.listen(0, '127.0.0.1', ok))
  const port = (srv.address() as { port: number }).port
  await new Promise((ok) => srv.close(ok))
  return port
}

let redis: ChildProcess | undefined
async function redisUrl(): Promise<string> {
  if (process.env.KERNELPACK_TEST_REDIS) return process.env.KERNELPACK_TEST_REDIS
  const port = await freePort()
  redis = spawn(redisServer, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' })
  for (let i = 0; i < 100; i++) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = createServer()
      s.once('error', () => resolve(true)) // in use: redis is listening
      s.listen(port, '127.0.0.1', () => s.close(() => resolve(false)))
    })
    if (ok) return `redis://127.0.0.1:${port}`
    await new Promise((r) => setTimeout(r, 50))
  }
  throw new Error(`redis-server did not listen on 127.0.0.1:${port}`)
}

const url = await redisUrl()
const nonce = randomBytes(8).toString('hex')
const saxpy = readFileSync(join(repoRoot, 'test', 'fixtures', 'packaging', 'vite-app', 'src', 'saxpy.cu'), 'utf8')

interface Machine { name: string; project: string; env: Record<string, string> }

/** A CI runner: its own checkout folder holding saxpy.cu (tagged `tag`), its own ccache and kernelpack caches. */
function machine(name: string, tag: string): Machine {
  // inside the repository's test output, so that a bundle of the checkout resolves @kernelpack/runtime
  const root = join(repoRoot, 'test', '.out', 'remote-cache', `${nonce}-${tag.replace(/\W+/g, '-')}-${name}`)
  const project = join(root, 'checkout')
  mkdirSync(project, { recursive: true })
  // a declaration, not a comment: ccache's preprocessor mode hashes the preprocessed text, where comments are gone
  writeFileSync(join(project, 'saxpy.cu'), `// ${tag}\nextern const char kp_remote_cache_run_${tag.replace(/\W+/g, '_')}[];\n${saxpy}`)
  return {
    name,
    project,
    env: {
      CCACHE_DIR: join(root, 'ccache'),
      CCACHE_REMOTE_STORAGE: url,
      CCACHE_BASEDIR: project,
      KERNELPACK_CACHE_DIR: join(root, 'kernelpack-cache'),
    },
  }
}

function stats(m: Machine): Record<string, number> {
  const r = spawnSync(ccache, ['--print-stats'], { encoding: 'utf8', env: { ...process.env, ...m.env } })
  return Object.fromEntries(r.stdout.split('\n').filter(Boolean).map((l) => { const [k, v] = l.split('\t'); return [k!, Number(v)] }))
}

function kernelpackBuild(m: Machine, args: string[]): string {
  const r = spawnSync(process.execPath, [join(repoRoot, 'packages', 'cli', 'bin', 'kernelpack.mjs'), 'build', 'saxpy.cu', '-o', 'out', '--launcher', 'ccache', ...args], {
    cwd: m.project, encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '', ...m.env },
  })
  assert.is(r.status, 0, `${m.name}: kernelpack build failed:\n${r.stdout}${r.stderr}`)
  return r.stdout
}

const offloadOf = (m: Machine, file = join('out', 'saxpy.offload')) => readFileSync(join(m.project, file))

const remote = suite('ccache remote storage (redis) shared by two machines')

for (const compiler of ['nvcc', 'clang']) {
  remote(`kernelpack build --launcher ccache, ${compiler}: A compiles and uploads, B's compiles are remote hits, outputs byte-identical`, () => {
    const tag = `${nonce} ${compiler}`
    const a = machine('a', tag)
    const b = machine('b', tag)
    const args = ['--arch', '80', '--compiler', compiler === 'nvcc' ? 'nvcc' : tool('clang++')]
    kernelpackBuild(a, args)
    const sa = stats(a)
    assert.equal([sa.cache_miss, sa.remote_storage_hit], [2, 0], `A: two compiles (sm_80, compute_80) reach the compiler: ${JSON.stringify(sa)}`)
    assert.ok(sa.remote_storage_write! > 0, 'A uploads its results')
    const out = kernelpackBuild(b, args)
    assert.not.match(out, 'cached', 'B\'s kernelpack cache is cold: it runs ccache for both targets')
    const sb = stats(b)
    assert.equal([sb.remote_storage_hit, sb.cache_miss], [2, 0], `B: both compiles are remote hits: ${JSON.stringify(sb)}`)
    assert.ok(offloadOf(a).equals(offloadOf(b)), 'the two machines wrote the same bytes')
    assert.is(readFileSync(join(a.project, 'out', 'saxpy.manifest.json'), 'utf8'), readFileSync(join(b.project, 'out', 'saxpy.manifest.json'), 'utf8'))
    // B again: kernelpack's own cache answers before any ccache process is started
    const again = kernelpackBuild(b, args)
    assert.match(again, 'cached')
    assert.equal(stats(b), sb, 'ccache was not called')
  })
}

remote('the plugin\'s launcher option: a Vite build on each machine (its root the checkout), B\'s compiles remote hits, identical assets', async () => {
  const tag = `${nonce} plugin`
  const a = machine('a', tag)
  const b = machine('b', tag)
  writeFileSync(join(a.project, 'main.js'), "export { saxpy } from './saxpy.cu'\n")
  writeFileSync(join(b.project, 'main.js'), "export { saxpy } from './saxpy.cu'\n")
  const saved = { ...process.env }
  const run = async (m: Machine) => {
    // ccache reads its configuration from the environment of the compiles the plugin starts
    Object.assign(process.env, m.env)
    try {
      return await build.vite({ root: m.project, entry: 'main.js', outDir: join(m.project, 'dist'), options: { arch: '90', launcher: 'ccache', cacheDir: m.env.KERNELPACK_CACHE_DIR!, dtsScan: [], inline: 0 } })
    } finally {
      for (const k of Object.keys(m.env)) { if (saved[k] === undefined) delete process.env[k]; else process.env[k] = saved[k] }
    }
  }
  const outA = await run(a)
  assert.equal([stats(a).cache_miss, stats(a).remote_storage_hit], [2, 0])
  const outB = await run(b)
  const sb = stats(b)
  assert.equal([sb.remote_storage_hit, sb.cache_miss], [2, 0], JSON.stringify(sb))
  const asset = (o: typeof outA, m: Machine) => o.files.filter((f) => f.endsWith('.offload')).map((f) => readFileSync(join(m.project, 'dist', f)))
  assert.is(asset(outA, a).length, 1)
  assert.ok(asset(outA, a)[0]!.equals(asset(outB, b)[0]!), 'identical offload binaries')
})

remote.after(() => { redis?.kill() })

remote.run()
