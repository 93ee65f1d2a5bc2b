// Device printf as a GPU prints it (issue 32, part 2): `print` receives the exact text (no newline added), and
// within a warp the records come statement by statement, lanes in order (a warp runs each printf for all its
// active lanes before the next statement; a statement only some lanes reach prints for those lanes only),
// blocks one after the other. The expected text is written here from that rule and the kernels' source
// (test/fixtures/emulator/printf-warp.cu), built by nvcc and clang; on the calling thread and on workers, in
// thread loops and in the continuation scheme, through the backend and through loadModule. What printf returns
// is CUDA's: the number of arguments its format reads.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { join } from 'node:path'
import { createEmulatorBackend } from '@kernelpack/emulator'
import { loadModule } from '@kernelpack/runtime'
import { readPtxManifest } from '@kernelpack/toolchain'
import { compilePtxAll, corpusConfigs } from '../helpers/ptx-cache.js'
import { KernelRunner, createRng } from '../helpers/kernel-runner.js'
import { fixturesDir } from '../helpers/tools.js'
import { defaultPrint } from '../../packages/emulator/src/printf.js'

const source = join(fixturesDir, 'emulator', 'printf-warp.cu')
const configs = corpusConfigs.filter((c) => c.label !== 'nvcc compute_90')
const texts = await compilePtxAll(configs.map((config) => ({ source, config })))

const blocks = 3
const rng = createRng(32)
const data = Int32Array.from({ length: 32 * blocks }, () => rng.int(-40, 40))
const hex = (m: number) => `0x${(m >>> 0).toString(16).padStart(8, '0')}`
const lanes = Array.from({ length: 32 }, (_, l) => l)

/** What a GPU prints for warp_primitives: per block, each statement for the lanes that reach it, in order. */
function expectedWarpPrimitives(): string {
  let s = ''
  for (let b = 0; b < blocks; b++) {
    const v = (l: number) => data[b * 32 + l]!
    const ballot = (p: (l: number) => boolean) => lanes.reduce((m, l) => (p(l) ? m | (1 << l) : m), 0)
    const mask1 = ballot((l) => v(l) > 0)
    const mask2 = ballot((l) => v(l) % 3 === 0)
    const sum = lanes.reduce((t, l) => t + v(l), 0)
    for (const l of lanes) s += `block ${b} lane ${String(l).padStart(2)}: v = ${v(l)}\n`
    for (const l of lanes.filter((l) => l < 4)) s += `lane ${l}: mask1 = ${hex(mask1)}\n`
    for (const l of lanes) s += `lane ${l}: mask2 = ${hex(mask2)}, sum = ${sum}\n`
    for (const l of lanes.filter((l) => l % 8 === 7)) s += `[${l}]`
    s += ` end of block ${b}\n`
  }
  return s
}

/** What a GPU prints for uneven_loop (one warp): trip by trip, each of the loop's two statements for the
 *  lanes still in the loop. */
function expectedUnevenLoop(): string {
  let s = ''
  for (let i = 0; i < 2; i++) {
    const active = lanes.filter((l) => l % 3 > i)
    for (const l of active) s += `lane ${l} trip ${i}\n`
    for (const l of active) s += `  +${l * 10 + i}\n`
  }
  return s
}

configs.forEach((config, r) => {
  const ptx = texts[r]!
  const s = suite(`device printf in a GPU's order (${config.label})`)

  for (const [what, options] of [
    ['calling thread, thread loops', { workers: 0 }],
    ['calling thread, continuation scheme', { workers: 0, threadLoops: false }],
    ['2 workers', { workers: 2 }],
  ] as const) {
    s(`${what}: warp primitives, statement by statement per warp, exactly the text printed`, async () => {
      const printed: string[] = []
      const be = createEmulatorBackend({ ...options, print: (text) => printed.push(text) })
      try {
        const k = await KernelRunner.load(be, ptx, config.target, `printf-warp.cu (${config.label})`)
        await k.launch('warp_primitives', blocks, 32, [await k.upload(data)])
        assert.fixture(printed.join(''), expectedWarpPrimitives())
        printed.length = 0
        await k.launch('uneven_loop', 1, 32, [await k.alloc(4 * 32)])
        assert.fixture(printed.join(''), expectedUnevenLoop())
      } finally {
        be.dispose()
      }
    })
  }

  s('what printf returns: the number of arguments its format reads (3, and 0 for none), on both tiers, in both schemes and on workers', async () => {
    const expected = Array.from({ length: 64 }, (_, i) => (i % 2 === 0 ? 3 : 0))
    for (const options of [{ workers: 0 }, { workers: 0, codegen: 'js' as const }, { workers: 0, threadLoops: false }, { workers: 2 }]) {
      let text = ''
      const be = createEmulatorBackend({ ...options, print: (t) => { text += t } })
      try {
        const k = await KernelRunner.load(be, ptx, config.target, `printf-warp.cu (${config.label})`)
        const out = await k.alloc(4 * 64)
        await k.launch('printf_result', 1, 32, [out])
        assert.equal([...await k.read(out, Int32Array)], expected, JSON.stringify(options))
        assert.ok(text.includes('t31:  7.75% of x\n') && text.includes('no arguments, 100%\n'), text.slice(0, 200))
      } finally {
        be.dispose()
      }
    }
  })

  s('without `print`, Node\'s process.stdout receives the text as it is', async () => {
    const be = createEmulatorBackend({ workers: 0 })
    const written: string[] = []
    const write = process.stdout.write
    try {
      const k = await KernelRunner.load(be, ptx, config.target, `printf-warp.cu (${config.label})`)
      const input = await k.upload(data)
      process.stdout.write = ((chunk: string) => { written.push(chunk); return true }) as typeof process.stdout.write
      await k.launch('warp_primitives', blocks, 32, [input])
    } finally {
      process.stdout.write = write
      be.dispose()
    }
    assert.fixture(written.join(''), expectedWarpPrimitives())
  })

  s('loadModule\'s `print` option', async () => {
    let text = ''
    const mod = await loadModule(new TextEncoder().encode(ptx), await readPtxManifest(ptx, { demangle: false }), { backend: 'emulator', workers: 0, print: (t) => { text += t } })
    const input = await mod.upload(data)
    await mod.kernel('warp_primitives').launch({ grid: blocks, block: 32 }, input)
    await mod.synchronize()
    assert.fixture(text, expectedWarpPrimitives())
  })

  s.run()
})

// ---
const browser = suite('the default print where there is no process.stdout (browsers)')

browser('one console.log per completed line, the rest kept until its newline', () => {
  const saved = Object.getOwnPropertyDescriptor(globalThis, 'process')!
  const log = console.log
  const lines: unknown[][] = []
  let print: (text: string) => void
  Object.defineProperty(globalThis, 'process', { value: undefined, configurable: true, writable: true })
  try {
    print = defaultPrint()
  } finally {
    Object.defineProperty(globalThis, 'process', saved)
  }
  console.log = (...xs: unknown[]) => void lines.push(xs)
  try {
    print('lane 0: ')
    print('v = 1\nlane 1: v = 2\n[7]')
    print('[15] end\n')
  } finally {
    console.log = log
  }
  assert.equal(lines, [['lane 0: v = 1'], ['lane 1: v = 2'], ['[7][15] end']])
})

browser.run()
