import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseDiagnostics, parseDepFile, formatDiagnostic, CompileError } from '@kernelpack/toolchain'
import { fixturesDir } from '../helpers/tools.js'

const logs = join(fixturesDir, 'toolchain', 'logs')
const file = 'refs/cu/bad.cu'

// ---

const parse = suite('parseDiagnostics')

parse('nvcc (reference log): place from file(LINE), column from the caret line, codes, end of source', () => {
  const ds = parseDiagnostics(readFileSync(join(logs, 'nvcc-bad.log'), 'utf8'), { file, lineCount: 13 })
  assert.equal(ds.map((d) => [d.file, d.line, d.column, d.severity, d.code ?? null]), [
    [file, 9, 5, 'error', null], // caret under `if` in "    if (i < n) {"
    [file, 8, 9, 'warning', '177-D'], // caret under `i` in "    int i = …"
    [file, 13, 1, 'error', null], // "At end of source"
    [file, 7, 1, 'note', '3196-D'],
  ])
  assert.is(ds[0]!.message, 'expected a ";"')
  assert.is(ds[0]!.frame, '      if (i < n) {\n      ^')
})

parse('clang (reference log): file:line:col, frames, no driver noise', () => {
  const ds = parseDiagnostics(readFileSync(join(logs, 'clang-bad.log'), 'utf8'), { file })
  assert.equal(ds.map((d) => [d.file, d.line, d.column, d.severity, d.message]), [
    [file, 8, 50, 'error', "expected ';' at end of declaration"],
    [file, 13, 13, 'error', 'function definition is not allowed here'],
    [file, 13, 46, 'error', "expected '}'"],
    [file, 7, 1, 'note', "to match this '{'"],
  ])
  assert.match(ds[0]!.frame!, /^ {4}8 \| {5}int i = blockIdx\.x/)
})

parse('tool messages without a place belong to the compiled file', () => {
  const ds = parseDiagnostics("nvcc fatal   : Unsupported gpu architecture 'compute_50'\nptxas fatal   : Unresolved extern function '_Z1fv'\n", { file: 'k.cu' })
  assert.equal(ds.map((d) => [d.file, d.line, d.severity, d.message]), [
    ['k.cu', 0, 'error', "nvcc: Unsupported gpu architecture 'compute_50'"],
    ['k.cu', 0, 'error', "ptxas: Unresolved extern function '_Z1fv'"],
  ])
})

parse('gcc preprocessor errors (nvcc runs gcc -E) and clang warning flags; mapped paths', () => {
  const text = 'In file included from /stage/x.cu:1:\n/stage/inc/k.cu:1:10: fatal error: nope.h: No such file or directory\n    1 | #include "nope.h"\n      |          ^~~~~~~~\ncompilation terminated.\nk.cu:3:7: warning: unused variable \'x\' [-Wunused-variable]\n'
  const ds = parseDiagnostics(text, { file: 'k.cu', mapPath: (p) => p.replace('/stage/inc/', '/real dir/') })
  assert.equal(ds.map((d) => [d.file, d.line, d.column, d.severity, d.code ?? null]), [
    ['/real dir/k.cu', 1, 10, 'error', null],
    ['k.cu', 3, 7, 'warning', '-Wunused-variable'],
  ])
})

// ---

const format = suite('formatDiagnostic / CompileError')

format('file:line:col: severity: message, and a CompileError lists them all', () => {
  const ds = parseDiagnostics(readFileSync(join(logs, 'clang-bad.log'), 'utf8'), { file })
  assert.is(formatDiagnostic(ds[0]!), "refs/cu/bad.cu:8:50: error: expected ';' at end of declaration")
  const err = new CompileError(file, ds, { target: 'sm_80' })
  assert.is(err.name, 'CompileError')
  assert.is(err.userError, true)
  assert.is(err.message.split('\n')[0], 'failed to compile refs/cu/bad.cu for sm_80 (3 errors)')
  assert.is(err.message.split('\n').length, 5)
})

// ---

const deps = suite('parseDepFile')

deps('GCC escaping: continuations, escaped spaces, $$ and \\#', () => {
  const text = 'out.cubin: /a\\ b/k.cu \\\n  /usr/include/x.h /p/$$(x)/y\\#1.h \\\n  /usr/include/x.h\n\n/a\\ b/k.cu:\n'
  assert.equal(parseDepFile(text), ['/a b/k.cu', '/usr/include/x.h', '/p/$(x)/y#1.h'])
})

parse.run()
format.run()
deps.run()
