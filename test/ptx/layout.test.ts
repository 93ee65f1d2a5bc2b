// The kernel parameter layout of @kernelpack/ptx (layout.ts, interface.ts) against ptxas: for every PTX file in
// the test fixtures and the emulator corpus's PTX (nvcc compute_80/compute_90 and clang 22 sm_80, which writes
// `.ptr .align N` parameters), the offsets and sizes equal the EIATTR_KPARAM_INFO records of the sm_90 cubin
// `ptxas -c` makes from it.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { createHash } from 'node:crypto'
import { readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { layoutParams, readPtxInterface } from '@kernelpack/ptx'
import { fixturesDir, tempDir, tool } from '../helpers/tools.js'
import { compilePtxAll, corpusConfigs } from '../helpers/ptx-cache.js'
import { exec } from '../toolchain/exec.js'
import { readKernelParams } from '../toolchain/cubin.js'
import { ownSource } from '../fixtures/emulator/cases-own.js'
import { referenceSource } from '../fixtures/emulator/cases-reference.js'

const unit = suite('layoutParams')

unit('each parameter at the next multiple of its alignment; the block rounded up to 8', () => {
  assert.equal(layoutParams([{ size: 1, align: 1 }, { size: 8, align: 8 }, { size: 2, align: 2 }]), { offsets: [0, 8, 16], sizes: [1, 8, 2], aligns: [1, 8, 2], end: 18, size: 24 })
  assert.equal(layoutParams([]), { offsets: [], sizes: [], aligns: [], end: 0, size: 8 })
  assert.equal(layoutParams([{ size: 4, align: 4 }, { size: 48, align: 16 }, { size: 8, align: 8 }]).offsets, [0, 16, 64])
})

unit('the .align after .ptr is the pointee alignment: it does not move the parameter', () => {
  const iface = readPtxInterface(`.version 8.0
.target sm_80
.address_size 64
.visible .entry k(
  .param .u32 n,
  .param .u64 .ptr .global .align 16 p,
  .param .align 16 .b8 s[20],
  .param .u8 c
) { ret; }`)
  const k = iface.kernels[0]!
  assert.equal(k.params.map((p) => [p.name, p.type, p.size, p.align, p.offset, p.pointeeAlign]), [
    ['n', 'u32', 4, 4, 0, undefined], ['p', 'u64', 8, 8, 8, 16], ['s', 'b8', 20, 16, 16, undefined], ['c', 'u8', 1, 1, 36, undefined],
  ])
  assert.is(k.params[1]!.pointerSpace, 'global')
  assert.is(k.layout.size, 40)
})

unit('a kernel declared before its definition (clang -fgpu-rdc, a static template kernel) is one kernel, described where it is defined', () => {
  const iface = readPtxInterface(`.version 8.0
.target sm_80
.address_size 64
.weak .entry _ZL1kIiEvPT___intern__ab(
  .param .u64 .ptr .align 1 p
)
;
.global .align 8 .u64 __clang_gpu_used_external[1] = {_ZL1kIiEvPT___intern__ab};
.visible .entry other() { ret; }
.weak .entry _ZL1kIiEvPT___intern__ab(
  .param .u64 .ptr .align 1 p
)
.maxntid 128, 1, 1
{ ret; }
.extern .entry elsewhere(.param .u32 n);`)
  assert.equal(iface.kernels.map((k) => [k.name, k.maxntid]), [['other', undefined], ['_ZL1kIiEvPT___intern__ab', [128, 1, 1]], ['elsewhere', undefined]])
})

unit.run()

// ---
const ptxas = suite('layout = ptxas EIATTR_KPARAM_INFO (sm_90)')

function listPtx(dir: string): string[] {
  const out: string[] = []
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name)
    if (statSync(p).isDirectory()) out.push(...listPtx(p))
    else if (name.endsWith('.ptx') || (name.endsWith('.s') && /^\s*\.version\s/m.test(readFileSync(p, 'utf8')))) out.push(p)
  }
  return out
}

ptxas('every PTX file of the fixtures and of the emulator corpus (nvcc and clang)', async () => {
  const texts = new Map<string, { label: string; text: string }>()
  const add = (label: string, text: string) => {
    const key = createHash('sha256').update(text).digest('hex')
    if (!texts.has(key)) texts.set(key, { label, text })
  }
  for (const f of listPtx(fixturesDir)) add(relative(fixturesDir, f), readFileSync(f, 'utf8'))
  const requests = corpusConfigs.flatMap((config) => [ownSource, referenceSource].map((source) => ({ source, config })))
  ;(await compilePtxAll(requests)).forEach((text, i) => add(`${relative(dirname(requests[i]!.source), requests[i]!.source)} (${requests[i]!.config.label})`, text))
  assert.ok(texts.size >= 15, `${texts.size} distinct PTX texts`)
  const work = tempDir('kp-ptx-layout-')
  const items = [...texts.values()]
  let kernels = 0
  let ptrAlign = 0
  let next = 0
  const worker = async () => {
    while (next < items.length) {
      const i = next++
      const { label, text } = items[i]!
      const src = join(work, `${i}.ptx`)
      const out = join(work, `${i}.cubin`)
      writeFileSync(src, text)
      await exec(tool('ptxas'), ['-c', '-arch=sm_90', src, '-o', out])
      const cubin = new Uint8Array(readFileSync(out))
      for (const k of readPtxInterface(text).kernels) {
        const ref = readKernelParams(cubin, k.name) ?? []
        assert.equal(k.layout.offsets, ref.map((p) => p.offset), `${label}: ${k.name} offsets`)
        assert.equal(k.layout.sizes, ref.map((p) => p.size), `${label}: ${k.name} sizes`)
        kernels++
        ptrAlign += k.params.filter((p) => p.pointeeAlign !== undefined).length
      }
    }
  }
  await Promise.all([worker(), worker()])
  console.log(`  ${items.length} PTX texts, ${kernels} kernels, ${ptrAlign} .ptr .align params`)
  assert.ok(kernels >= 100, `${kernels} kernels compared`)
  // clang's `.ptr .align N` parameters are among them
  assert.ok(ptrAlign > 0, 'no `.ptr .align` parameter was compared')
})

ptxas.run()
