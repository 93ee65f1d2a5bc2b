import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { readPtxManifest } from '@kernelpack/toolchain'
import { emitHostRefs, hostRefSymbolsFromManifest, hostRefPatterns, type HostRefSymbol } from '../../packages/codegen/src/host-refs.js'
import { cComment } from '../../packages/codegen/src/serialize.js'
import { fixturesDir } from '../helpers/tools.js'

// Every nvcc 13.0 case with a non-empty rdc.hostref.c (cudafe++ output cut from X.cudafe1.cpp), its
// host-referenced PTX symbols (rdc.hostref-symbols.txt) and its module id, copied from reference/nvcc into test/fixtures/codegen/nvcc (see its README).
const nvccDir = join(fixturesDir, 'codegen', 'nvcc')
const cases = ['extern_c', 'host_launch', 'scalars', 'shared_sync', 'static_kernels', 'structs', 'templates', 'unreferenced']
const read = (name: string) => readFileSync(join(nvccDir, name), 'utf8')
const lines = (text: string) => text.split('\n').map((l) => l.trim()).filter(Boolean)

// ---
const emit = suite('emitHostRefs')

for (const name of cases) {
  emit(`${name}: byte-identical to cudafe++`, async () => {
    const expected = read(`${name}.rdc.hostref.c`)
    assert.ok(expected.length > 0)
    const symbolsFile = `${name}.rdc.hostref-symbols.txt`
    const only = existsSync(join(nvccDir, symbolsFile)) ? lines(read(symbolsFile)) : []
    const manifest = await readPtxManifest(read(`${name}.rdc.sm_90.ptx`), { demangle: false })
    const symbols = hostRefSymbolsFromManifest(manifest, only)
    const moduleId = read(`${name}.rdc.module_id`).trim()
    assert.fixture(emitHostRefs(symbols, { moduleId }), expected)
  })
}

// linkage_mix.cu (test/fixtures/codegen/linkage_mix, made here with nvcc 13.0: see the fixtures README) names
// every linkage form from host code: namespaced templates, static/anonymous-namespace kernels and variables.
emit('linkage_mix: byte-identical to cudafe++ for every linkage and naming form', async () => {
  const dir = join(fixturesDir, 'codegen', 'linkage_mix')
  const at = (f: string) => readFileSync(join(dir, f), 'utf8')
  const manifest = await readPtxManifest(at('linkage_mix.rdc.sm_90.ptx'), { demangle: false })
  const symbols = hostRefSymbolsFromManifest(manifest, lines(at('linkage_mix.rdc.hostref-symbols.txt')))
  assert.fixture(emitHostRefs(symbols, { moduleId: at('linkage_mix.rdc.module_id').trim() }), at('linkage_mix.rdc.hostref.c'))
})

emit('no symbols: six empty arrays of one NUL each', () => {
  const text = emitHostRefs([])
  assert.is(text.match(/\n0x0\};\n/g)?.length, 6)
  assert.is(text, read('unreferenced.rdc.hostref.c'))
})

emit('sorted by bytes and deduplicated (overloads collapse)', () => {
  const s = (name: string): HostRefSymbol => ({ name, kind: 'kernel', linkage: 'visible' })
  const text = emitHostRefs([s('_Z6k_overPi'), s('_Z5k_intijlmPi'), s('_Z6k_overPf'), s('Zed'), s('alpha')])
  const comments = [...text.matchAll(/\/\* (.*) \*\//g)].map((m) => m[1])
  assert.equal(comments, ['Zed', '_Z5k_int*', '_Z6k_over*', 'alpha'])
})

emit('c dialect: same bytes and sections, no extern "C"', () => {
  const sym: HostRefSymbol[] = [{ name: 'saxpy', kind: 'kernel', linkage: 'visible' }]
  const cpp = emitHostRefs(sym)
  const c = emitHostRefs(sym, { dialect: 'c' })
  assert.not.match(c, /extern/)
  assert.is(c, cpp.replace(/extern "C" \{\n/g, '').replace(/\n\}\n/g, '\n').replace(/^extern __attribute__/gm, '__attribute__'))
})

emit('names that could close a comment are escaped', () => {
  const text = emitHostRefs([{ name: 'a*/b"c\n', kind: 'variable', linkage: 'visible' }])
  const comment = /\/\* (.*) \*\//.exec(text)![1]!
  assert.not.match(comment, /\*\//)
  assert.ok(text.includes('0x61,0x2a,0x2f,0x62,0x22,0x63,0xa,0x0,'))
})

emit('missing module id for an external template kernel is a clear error, or skipped on request', () => {
  const tmpl: HostRefSymbol[] = [{ name: '_Z5axpbyIfEvT_PKS0_S0_PS0_i', kind: 'kernel', linkage: 'weak' }, { name: '_Z9ml_staticPi', kind: 'kernel', linkage: 'internal' }]
  assert.throws(() => emitHostRefs(tmpl), /module id/)
  const text = emitHostRefs(tmpl, { missingModuleId: 'skip' })
  assert.equal([...text.matchAll(/\/\* (.*) \*\//g)].map((m) => m[1]), ['_Z5axpby*'])
})

emit.run()

// ---
const patterns = suite('hostRefPatterns')
const id = '_7c859894_16_mixed_linkage_cu_ml_c'
const st = `__nv_static_34_${id}_`

// The rows of FINDINGS.md §1.3's pattern table (mixed_linkage.cu, nvcc 13.0 -rdc=true).
const table: Array<[HostRefSymbol, Array<[string, string]>]> = [
  [{ name: 'ml_c', kind: 'kernel', linkage: 'visible' }, [['KE', 'ml_c']]],
  [{ name: '_Z6ml_cppPi', kind: 'kernel', linkage: 'visible' }, [['KE', '_Z6ml_cpp*']]],
  [{ name: '_ZN2ns5ml_nsEPi', kind: 'kernel', linkage: 'visible' }, [['KE', '_ZN2ns5ml_ns*']]],
  [{ name: '_Z7ml_tmplIiEvPT_', kind: 'kernel', linkage: 'weak' }, [['KE', '_Z7ml_tmpl*'], ['KI', `${st}*7ml_tmpl*`]]],
  [{ name: 'ml_dev_ext', kind: 'variable', linkage: 'visible' }, [['DE', 'ml_dev_ext']]],
  [{ name: '_ZN2ns9ml_dev_nsE', kind: 'variable', linkage: 'visible' }, [['DE', '_ZN2ns9ml_dev_ns*']]],
  [{ name: `${st}_Z9ml_staticPi`, kind: 'kernel', linkage: 'internal' }, [['KI', `${st}*9ml_static*`]]],
  [{ name: `${st}_ZN2ns12ml_ns_staticEPi`, kind: 'kernel', linkage: 'internal' }, [['KI', `${st}*2ns12ml_ns_static*`]]],
  [{ name: `${st}_ZN45_GLOBAL__N_${id}7ml_anonEPi`, kind: 'kernel', linkage: 'internal' }, [['KI', `${st}*45_GLOBAL__N_${id}7ml_anon*`]]],
  [{ name: `${st}ml_dev_static`, kind: 'variable', linkage: 'internal' }, [['DI', `${st}*ml_dev_static`]]],
  [{ name: `${st}_ZN43_INTERNAL${id}45_GLOBAL__N_${id}11ml_dev_anonE`, kind: 'variable', linkage: 'internal' }, [['DI', `${st}*45_GLOBAL__N_${id}11ml_dev_anon*`]]],
  [{ name: `${st}_Z16ml_tmpl_localargIN45_GLOBAL__N_${id}5LocalEEvPT_`, kind: 'kernel', linkage: 'internal' }, [['KI', `${st}*16ml_tmpl_localarg*`]]],
  [{ name: 'c_tab', kind: 'variable', linkage: 'visible', space: 'const' }, [['CE', 'c_tab']]],
]
for (const [sym, expected] of table) {
  patterns(`${sym.name}`, () => assert.equal(hostRefPatterns(sym, id), expected))
}

patterns('cComment leaves PTX identifiers alone', () => {
  assert.is(cComment('__nv_static_1_x_*$a%b*'), '__nv_static_1_x_*$a%b*')
  assert.is(cComment('*/'), '*\\/')
})

patterns.run()

// ---
const fromManifest = suite('hostRefSymbolsFromManifest')

fromManifest('default: every defined kernel and variable with its space', () => {
  const syms = hostRefSymbolsFromManifest({
    kernels: [{ name: 'k', demangled: 'k', linkage: 'visible', params: [] }, { name: 'x', demangled: 'x', linkage: 'extern', params: [] }],
    variables: [{ name: 'c', space: 'const', size: 4, linkage: 'internal' }],
  })
  assert.equal(syms, [{ name: 'k', kind: 'kernel', linkage: 'visible' }, { name: 'c', kind: 'variable', linkage: 'internal', space: 'const' }])
})

fromManifest('unknown name is an error naming it', () => {
  assert.throws(() => hostRefSymbolsFromManifest({ kernels: [], variables: [], source: 'a.cu' }, ['nope']), /"nope".*a\.cu/)
})

fromManifest.run()
