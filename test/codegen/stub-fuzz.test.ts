// Issue 17 item 1: every string from a user file that reaches a generated stub or .d.ts goes through one
// serializer. Property: for arbitrary Unicode file names, kernel names and demangled signatures (line
// terminators U+2028/U+2029, `*/`, `</script`, quotes, lone surrogates…), the stub and the .d.ts parse
// without errors and contain exactly the expected top-level statements and exports, and the `kernels`
// map's keys are exactly the kernels' full names. A name that escapes a comment or string would add a
// statement (`globalThis.PWNED=1`) or break the parse, and fail this.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import fc from 'fast-check'
import ts from 'typescript'
import type { KernelManifest } from '@kernelpack/offload'
import { emitLoaderDts, emitLoaderStub, jsComment, jsString, KernelNameCollisionError, nameKernelExports } from '@kernelpack/codegen'

const RUNS = 10_000

const hostile = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 24 }),
  fc.constantFrom('\u2028', '\u2029', '*/', '/*/', '</script>', '<!--', '-->', '"', "'", '`', '${x}', '\\', '\n', '\r\n', '\ud800', '??/', '__proto__', 'then', 'constructor'),
)
const text = fc.array(hostile, { minLength: 1, maxLength: 4 }).map((parts) => parts.join(''))
const ident = fc.stringMatching(/^[A-Za-z_$][\w$]{0,10}$/)

/** A kernel: extern "C" (name = demangled, an identifier or anything) or C++ (mangled name, any signature). */
const kernel = fc.oneof(
  fc.oneof(ident, text).map((name) => ({ name, demangled: name })),
  fc.tuple(ident, text).map(([n, sig]) => ({ name: `_Z${n.length}${n}v`, demangled: sig })),
)
const manifestArb = fc.array(kernel, { minLength: 0, maxLength: 4 }).map((ks): KernelManifest => ({
  kernels: ks.map((k) => ({ ...k, linkage: 'visible' as const, params: [{ type: 'u32', size: 4, align: 4 }] })),
  variables: [],
}))

interface Parsed { diagnostics: number; statements: string[]; exports: string[]; kernelKeys?: string[] }

function parse(source: string, fileName: string): Parsed {
  const sf = ts.createSourceFile(fileName, source, ts.ScriptTarget.ESNext, true, fileName.endsWith('.d.ts') ? ts.ScriptKind.TS : ts.ScriptKind.JS)
  const diagnostics = ((sf as unknown as { parseDiagnostics?: unknown[] }).parseDiagnostics ?? []).length
  const statements: string[] = []
  const exports: string[] = []
  let kernelKeys: string[] | undefined
  for (const st of sf.statements) {
    statements.push(ts.isVariableStatement(st) ? 'VariableStatement' : ts.isImportDeclaration(st) ? 'ImportDeclaration' : ts.isExportAssignment(st) ? 'ExportAssignment' : ts.isIfStatement(st) ? 'IfStatement' : `other: ${st.getText(sf).slice(0, 80)}`)
    if (ts.isVariableStatement(st) && st.modifiers?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword)) {
      for (const d of st.declarationList.declarations) {
        const name = (d.name as ts.Identifier).text
        exports.push(name)
        if (name === 'kernels') kernelKeys = keysOf(d)
      }
    }
    if (ts.isExportAssignment(st)) exports.push('default')
  }
  return { diagnostics, statements, exports, kernelKeys }
}

/** The string keys of the `kernels` object (stub: computed keys in Object.assign; .d.ts: a type literal). */
function keysOf(d: ts.VariableDeclaration): string[] {
  const keys: string[] = []
  const visit = (n: ts.Node) => {
    if ((ts.isPropertyAssignment(n) || ts.isPropertySignature(n)) && n.name) {
      const name = ts.isComputedPropertyName(n.name) ? n.name.expression : n.name
      if (ts.isStringLiteral(name)) keys.push(name.text)
      else keys.push(`<not a string literal: ${ts.SyntaxKind[name.kind]}>`)
    }
    ts.forEachChild(n, visit)
  }
  visit(d)
  return keys
}

const prop = suite('generated stub and .d.ts with arbitrary names')

prop(`parse and define exactly the expected exports (${RUNS} cases)`, () => {
  let generated = 0
  fc.assert(fc.property(text, manifestArb, (name, manifest) => {
    let exports
    try {
      exports = nameKernelExports(manifest, name)
    } catch (e) {
      // extern "C" names that cannot be exports (not identifiers, reserved, duplicates) are refused up front
      assert.instance(e, KernelNameCollisionError)
      return
    }
    generated++
    const expected = [...exports.map((e) => e.exportName), 'module', 'kernels', 'default'].sort()
    const fullNames = exports.map((e) => e.fullName)
    const stub = parse(emitLoaderStub({ manifest, name, asset: { kind: 'expression', expression: 'new URL("./k.offload", import.meta.url)' }, hot: true }), 'k.js')
    assert.is(stub.diagnostics, 0, `stub parses`)
    assert.equal(stub.statements.filter((s) => s !== 'VariableStatement'), ['ImportDeclaration', 'ExportAssignment', 'IfStatement'])
    assert.equal(stub.exports.sort(), expected)
    assert.equal(stub.kernelKeys, fullNames)
    const dts = parse(emitLoaderDts({ manifest, name }), 'k.cu.d.ts')
    assert.is(dts.diagnostics, 0, '.d.ts parses')
    assert.equal(dts.statements.filter((s) => s !== 'VariableStatement'), ['ImportDeclaration', 'ExportAssignment'])
    assert.equal(dts.exports.sort(), expected)
    assert.equal(dts.kernelKeys, fullNames)
  }), { numRuns: RUNS, seed: 0x5eed17 })
  assert.ok(generated > RUNS / 2, `most cases generate a stub (${generated} of ${RUNS})`)
})

prop.run()

// ---
const literal = suite('jsString')

literal('keeps the value and leaves no line terminator, </ or <!-- in the text', () => {
  fc.assert(fc.property(text, (s) => {
    const lit = jsString(s)
    assert.is(JSON.parse(lit), s)
    assert.not.match(lit, /[\u2028\u2029\n\r]|<\/|<!--/)
  }), { numRuns: 2000, seed: 17 })
})

literal('jsComment keeps a block comment open and on one line', () => {
  fc.assert(fc.property(text, (s) => {
    const c = jsComment(s)
    assert.not.match(c, /[\u2028\u2029\n\r]|\*\//)
  }), { numRuns: 2000, seed: 18 })
  assert.is(jsComment('void axpby<float>(float const*, float*)'), 'void axpby<float>(float const*, float*)')
})

literal('the issue\'s repro: a U+2028 in a path cannot end the header comment', () => {
  const name = 'x\u2028globalThis.PWNED=1;console.log("PWNED");/k.cu'
  const manifest: KernelManifest = { kernels: [{ name: 'k', demangled: 'k', linkage: 'visible', params: [] }], variables: [] }
  const stub = emitLoaderStub({ manifest, name, asset: { kind: 'expression', expression: 'new URL("./k.offload", import.meta.url)' } })
  assert.not.ok(stub.includes('\u2028'))
  assert.is(stub.split('\n')[0], '// Generated by unplugin-cuda from "x\\u2028globalThis.PWNED=1;console.log(\\"PWNED\\");/k.cu". Do not edit.')
})

literal.run()
