import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { join } from 'node:path'
import { resolveOptions } from 'unplugin-cuda'

const cache = suite('resolveOptions: cacheDir')

function withEnv<T>(value: string | undefined, fn: () => T): T {
  const saved = process.env.KERNELPACK_CACHE_DIR
  if (value === undefined) delete process.env.KERNELPACK_CACHE_DIR
  else process.env.KERNELPACK_CACHE_DIR = value
  try { return fn() } finally {
    if (saved === undefined) delete process.env.KERNELPACK_CACHE_DIR
    else process.env.KERNELPACK_CACHE_DIR = saved
  }
}

cache('defaults to <root>/node_modules/.cache/kernelpack', () => {
  withEnv(undefined, () => assert.is(resolveOptions({}, '/proj').cacheDir, join('/proj', 'node_modules', '.cache', 'kernelpack')))
})

cache('honours $KERNELPACK_CACHE_DIR like the toolchain and the CLI', () => {
  withEnv('/shared/kp-cache', () => assert.is(resolveOptions({}, '/proj').cacheDir, '/shared/kp-cache'))
  withEnv('rel/cache', () => assert.is(resolveOptions({}, '/proj').cacheDir, join('/proj', 'rel', 'cache')))
})

cache('an explicit option wins over the environment', () => {
  withEnv('/shared/kp-cache', () => assert.is(resolveOptions({ cacheDir: 'mine' }, '/proj').cacheDir, join('/proj', 'mine')))
})

cache.run()

// ---
const size = suite('resolveOptions: cacheSize')

size('passes the limit to the toolchain; a size that is not one is a TypeError naming the option', () => {
  assert.is(resolveOptions({ cacheSize: '500M' }, '/proj').cacheSize, '500M')
  assert.is(resolveOptions({}, '/proj').cacheSize, undefined)
  assert.throws(() => resolveOptions({ cacheSize: 'huge' }, '/proj'), (e: Error) => e instanceof TypeError && /^unplugin-cuda: option cacheSize: cache size "huge" is not a size: write it as ccache's max_size/.test(e.message))
})

size.run()

// ---
const check = suite('resolveOptions: check (the emulator sanitizer)')

check('passes check to the stubs and turns lineinfo on unless set; none leaves both alone', () => {
  assert.equal(resolveOptions({ check: { race: true, mode: 'collect' } }, '/proj').check, { race: true, mode: 'collect' })
  assert.is(resolveOptions({ check: true }, '/proj').lineinfo, true)
  assert.is(resolveOptions({ check: true, lineinfo: false }, '/proj').lineinfo, false)
  assert.is(resolveOptions({}, '/proj').check, undefined)
  assert.is(resolveOptions({}, '/proj').lineinfo, false)
  assert.is(resolveOptions({ check: false }, '/proj').lineinfo, false)
})

check('a bad check is a TypeError naming the option', () => {
  assert.throws(() => resolveOptions({ check: 'race' as never }, '/proj'), /^unplugin-cuda: option check must be true, false or \{ race, sync, init, memory, mode \}, got "race"$/)
  assert.throws(() => resolveOptions({ check: { racecheck: true } as never }, '/proj'), /option check has an unknown key "racecheck"/)
  assert.throws(() => resolveOptions({ check: { mode: 'log' } as never }, '/proj'), /option check\.mode must be 'throw' or 'collect', got "log"/)
})

check.run()

// ---
const backend = suite('resolveOptions: backend')

backend("takes loadModule's four backends, 'webgpu' included (issue 15); 'auto' by default", () => {
  assert.is(resolveOptions({}, '/proj').backend, 'auto')
  for (const b of ['auto', 'cuda', 'emulator', 'webgpu'] as const) assert.is(resolveOptions({ backend: b }, '/proj').backend, b)
})

backend('anything else is a TypeError naming the option, the choices and the value', () => {
  for (const b of ['gpu', 'WebGPU', 'wgpu', '']) {
    assert.throws(() => resolveOptions({ backend: b as never }, '/proj'), (e: Error) => e instanceof TypeError && e.message === `unplugin-cuda: option backend must be 'auto', 'cuda', 'emulator' or 'webgpu' (loadModule's backends), got ${JSON.stringify(b)}`)
  }
})

backend.run()
