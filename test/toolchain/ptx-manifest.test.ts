import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { readFileSync, readdirSync } from 'node:fs'
import { join, basename, dirname } from 'node:path'
import type { KernelInfo, KernelManifest } from '@kernelpack/offload'
import { readPtxManifest, PtxParseError } from '@kernelpack/toolchain'
import { fixturesDir, tempDir, tool } from '../helpers/tools.js'
import { exec } from './exec.js'
import { readCubinSymbols, readKernelAttributes, readKernelParams, bindOf, layout } from './cubin.js'

const ptxDir = join(fixturesDir, 'toolchain', 'ptx')
const edgePtx = join(fixturesDir, 'toolchain', 'edge', 'grammar.ptx')
const work = tempDir('kp-ptx-manifest-')

/** ptxas output for a PTX file (relocatable `-c`, so `.extern` symbols may stay unresolved). */
const cubins = new Map<string, Promise<Uint8Array>>()
function assemble(file: string): Promise<Uint8Array> {
  let p = cubins.get(file)
  if (!p) {
    const out = join(work, basename(file) + '.cubin')
    p = exec(join(dirname(tool('nvcc')), 'ptxas'), ['-c', '-arch=sm_90', file, '-o', out]).then(() => new Uint8Array(readFileSync(out)))
    cubins.set(file, p)
  }
  return p
}


async function compareWithCubin(file: string, m: KernelManifest): Promise<void> {
  const elf = await assemble(file)
  const symbols = readCubinSymbols(elf)
  const entries = symbols.filter((s) => s.type === 'FUNC' && s.entry)
  assert.equal(m.kernels.map((k) => k.name).sort(), entries.map((s) => s.name).sort(), `${file}: kernels`)
  for (const k of m.kernels) {
    const sym = entries.find((s) => s.name === k.name)!
    assert.is(sym.bind, bindOf[k.linkage], `${file}: ${k.name} linkage`)
    const params = readKernelParams(elf, k.name) ?? []
    assert.equal(k.params.map((p) => p.size), params.map((p) => p.size), `${file}: ${k.name} param sizes`)
    assert.equal(layout(k), params.map((p) => p.offset), `${file}: ${k.name} param offsets (alignments)`)
  }
  for (const s of symbols.filter((x) => x.type === 'OBJECT' && /^\.nv\.(global|constant[1-9])/.test(x.section) && !x.name.startsWith('.') && !x.name.startsWith('__U'))) {
    const v = m.variables.find((x) => x.name === s.name)
    assert.ok(v, `${file}: variable ${s.name} (${s.section}) missing from the manifest`)
    assert.is(v!.size, s.size, `${file}: ${s.name} size`)
    assert.is(s.bind, bindOf[v!.linkage], `${file}: ${s.name} linkage`)
  }
  for (const v of m.variables.filter((x) => x.linkage !== 'internal')) {
    assert.ok(symbols.some((s) => s.name === v.name), `${file}: manifest variable ${v.name} not in the cubin`)
  }
}

// ---

const read = suite('readPtxManifest')

read('nvcc reference PTX: kernels, linkage, parameter sizes and alignments, variables match ptxas', async () => {
  const files = readdirSync(ptxDir).filter((f) => f.endsWith('.ptx')).sort()
  assert.is(files.length, 16)
  await Promise.all(files.map(async (f) => {
    const file = join(ptxDir, f)
    const m = await readPtxManifest(readFileSync(file, 'utf8'))
    assert.ok(m.kernels.length > 0, f)
    await compareWithCubin(file, m)
  }))
})

read('grammar corners: comments, strings, initializers, sections, vectors, arrays match ptxas', async () => {
  const m = await readPtxManifest(readFileSync(edgePtx, 'utf8'))
  await compareWithCubin(edgePtx, m)
  assert.equal(m.kernels.map((k) => k.name), ['bounded', 'required', 'weak_entry'])
  assert.equal(m.variables.map((v) => [v.name, v.space, v.linkage]), [
    ['vec4_var', 'global', 'internal'], ['grid2d', 'global', 'internal'], ['initialized', 'global', 'visible'],
    ['table', 'const', 'visible'], ['weak_scalar', 'global', 'weak'], ['common_counter', 'global', 'common'],
    ['extern_bytes', 'global', 'extern'], ['managed_u32', 'global', 'internal'],
  ])
  assert.is(m.variables.find((v) => v.name === 'vec4_var')!.align, 16)
  assert.is((m.variables.find((v) => v.name === 'managed_u32') as { managed?: boolean }).managed, true)
})

read('performance directives match the attributes ptxas records', async () => {
  const m = await readPtxManifest(readFileSync(edgePtx, 'utf8'))
  const elf = await assemble(edgePtx)
  const [bounded, required, weak] = m.kernels as [KernelInfo, KernelInfo, KernelInfo]
  assert.equal(bounded.maxntid, readKernelAttributes(elf, 'bounded').get(0x05)) // EIATTR_MAX_THREADS
  assert.equal(weak.maxntid, readKernelAttributes(elf, 'weak_entry').get(0x05))
  assert.equal(required.reqntid, readKernelAttributes(elf, 'required').get(0x10)) // EIATTR_REQNTID
  assert.is(required.maxnreg, readKernelAttributes(elf, 'required').get(0x1b)![0]) // EIATTR_MAXREG_COUNT
  assert.is(bounded.minnctapersm, 2) // as written in the fixture
  assert.is(bounded.maxnreg, undefined)
})

read('.ptr parameters: pointer flag set, the .align after .ptr is the pointee alignment', async () => {
  const m = await readPtxManifest(readFileSync(edgePtx, 'utf8'))
  assert.equal(m.kernels[0]!.params.map((p) => [p.type, p.size, p.align, p.count, p.pointer]), [
    ['u64', 8, 8, undefined, true], ['b8', 48, 16, 48, undefined], ['f64', 8, 8, undefined, undefined],
  ])
})

read('demangled names agree with llvm-cxxfilt; pointer flags follow the C++ signature', async () => {
  const m = await readPtxManifest(readFileSync(join(ptxDir, 'templates.sm_90.ptx'), 'utf8'))
  const names = m.kernels.map((k) => k.name)
  const ref = (await exec(tool('llvm-cxxfilt'), names)).stdout.trimEnd().split('\n')
  assert.equal(m.kernels.map((k) => k.demangled), ref)
  const axpby = m.kernels.find((k) => k.demangled === 'void axpby<float>(float, float const*, float, float*, int)')!
  assert.equal(axpby.params.map((p) => p.pointer ?? false), [false, true, false, true, false])
})

read('nvcc RDC internal names demangle without the __nv_static_ prefix', async () => {
  const m = await readPtxManifest(readFileSync(join(ptxDir, 'static_kernels.rdc.sm_90.ptx'), 'utf8'))
  const k = m.kernels.find((x) => x.name.startsWith('__nv_static_') && x.name.endsWith('_Z11apply_scalePfi'))!
  const ref = (await exec(tool('llvm-cxxfilt'), ['_Z11apply_scalePfi'])).stdout.trim()
  assert.is(k.demangled, ref)
  assert.is(k.linkage, 'internal')
})

read('demangle: false keeps the mangled names', async () => {
  const m = await readPtxManifest(readFileSync(join(ptxDir, 'structs.sm_90.ptx'), 'utf8'), { demangle: false })
  for (const k of m.kernels) assert.is(k.demangled, k.name)
})

read('malformed declarations throw PtxParseError with the line of the bad token', async () => {
  const ptx = '.version 8.0\n.target sm_90\n.address_size 64\n\n.visible .entry k(\n\t.param .u32 .align x k_param_0\n)\n{\n\tret;\n}\n'
  try {
    await readPtxManifest(ptx)
    assert.unreachable('should throw')
  } catch (err) {
    assert.instance(err, PtxParseError, String(err))
    assert.is((err as PtxParseError).line, 6)
    assert.match((err as Error).message, /bad \.align value `x`/)
  }
})

read('empty module', async () => {
  assert.equal(await readPtxManifest('.version 8.0\n.target sm_90\n.address_size 64\n'), { version: 1, kernels: [], variables: [] })
})

read.run()
