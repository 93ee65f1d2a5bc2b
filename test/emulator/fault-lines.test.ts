// Faults at the .cu line (issue 14 item 4): with line information in the PTX (nvcc -lineinfo, clang
// -gline-tables-only), an out-of-bounds store, the same store inside an inlined __device__ function, and a
// wait nobody ends name the fixture file and the line of the faulting access; without it they name the PTX
// line only. The expected lines come from the `// line:` markers in the fixture, not from the PTX.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { createEmulatorBackend, EmulatorFault } from '../../packages/emulator/src/index.js'
import { compilePtx, type PtxConfig } from '../helpers/ptx-cache.js'
import { repoRoot } from '../helpers/tools.js'
import { download, marshal, ptxBytes, upload } from './helpers.js'

const source = join(repoRoot, 'test', 'fixtures', 'emulator', 'faults', 'lineinfo.cu')
const marker = (name: string): number => {
  const i = readFileSync(source, 'utf8').split('\n').findIndex((l) => l.includes(`// line: ${name}`))
  if (i < 0) throw new Error(`${source} has no "// line: ${name}" marker`)
  return i + 1
}
const at = (name: string) => `${source}:${marker(name)}`

const nvcc: PtxConfig = { label: 'nvcc compute_80', compiler: 'nvcc', arch: 'compute_80', target: 'compute_80' }
const clang: PtxConfig = { label: 'clang sm_80', compiler: 'clang', arch: 'sm_80', target: 'compute_80' }
const builds = [
  { who: 'nvcc -lineinfo', ptx: await compilePtx({ source, config: nvcc, extraArgs: ['-lineinfo'] }) },
  { who: 'clang -gline-tables-only', ptx: await compilePtx({ source, config: clang, extraArgs: ['-gline-tables-only'] }) },
]
const plain = await compilePtx({ source, config: nvcc })

/** The EmulatorFault `run` throws. */
function faultOf(run: () => void): EmulatorFault {
  try { run() } catch (e) { assert.instance(e, EmulatorFault); return e as EmulatorFault }
  return assert.unreachable('expected an EmulatorFault') as never
}

/** Launches `kernel` (scale or scaleVia) over 64 threads with an `out` one element short. */
function shortStore(ptx: string, kernel: string): EmulatorFault {
  const be = createEmulatorBackend()
  const mod = be.loadModule(ptxBytes(ptx))
  const input = upload(be, new Float32Array(64).fill(2))
  const out = be.alloc(63 * 4)
  const f = faultOf(() => be.launch(mod.getFunction(kernel), { grid: [2, 1, 1], block: [32, 1, 1], sharedBytes: 0 },
    marshal([{ u64: input }, { u64: out }, { f32: 3 }])))
  assert.is(f.address, out + 63n * 4n)
  // the threads before the faulting one stored their elements
  assert.equal([...download(be, out, new Float32Array(63))].slice(0, 3), [6, 6, 6])
  return f
}

const lines = suite('faults name the .cu file and line')

for (const { who, ptx } of builds) {
  lines(`an out-of-bounds store (${who})`, () => {
    const f = shortStore(ptx, 'scale')
    assert.match(f.message, /^out-of-bounds or misaligned global memory access in kernel scale, instruction `st\.global\.(f32|b32) /, f.message)
    assert.ok(f.message.includes(`, at ${at('scale')})`), f.message)
    assert.equal(f.source && { file: f.source.file, line: f.source.line }, { file: source, line: marker('scale') })
  })

  lines(`a store in an inlined __device__ function: its line and the call site (${who})`, () => {
    const f = shortStore(ptx, 'scaleVia')
    assert.ok(f.message.includes(`, at ${at('put')} inlined at ${at('call')})`), f.message)
    assert.is(f.source?.line, marker('call'))
    assert.is(f.source?.inlined?.line, marker('put'))
  })

  lines(`a wait nobody ends: the deadlock names the line of the wait (${who})`, () => {
    const be = createEmulatorBackend()
    const mod = be.loadModule(ptxBytes(ptx))
    const flag = be.alloc(32 * 4)
    const f = faultOf(() => be.launch(mod.getFunction('waitForever'), { grid: [1, 1, 1], block: [32, 1, 1], sharedBytes: 0 }, marshal([{ u64: flag }])))
    assert.match(f.message, /^deadlock: thread \(\d+, 0, 0\) of block \(0, 0, 0\) keeps waiting/)
    assert.ok(f.message.includes(`, at ${at('wait')})`), f.message)
  })
}

lines('without line information the fault names the PTX line only', () => {
  assert.not.match(plain, /\.loc/)
  const f = shortStore(plain, 'scale')
  assert.match(f.message, /\(PTX line \d+\)/)
  assert.not.ok(f.message.includes('.cu'), f.message)
  assert.is(f.source, undefined)
})

lines.run()
