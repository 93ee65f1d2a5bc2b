// `kernelpack types [DIR|FILE.cu…]`: writes the declaration file of every .cu file before any bundler runs,
// so that `"build": "kernelpack types && tsc && vite build"` type-checks a fresh checkout (issue 16 item 3).
// Each .cu gets `<name>.cu.d.ts` (moduleResolution bundler) or, with `--form d.cu.ts`, `<name>.d.cu.ts`
// (node16/nodenext with allowArbitraryExtensions): the same text unplugin-cuda writes (see DeclarationForm). Only the PTX the manifest comes from is
// compiled, through the same cache as the plugin (its compile is reused by the bundler's build).
// `--check` writes nothing and exits 1 when a declaration file is missing or out of date (for projects that
// commit them).
import { existsSync, readFileSync, rmSync, statSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { DECLARATION_FORMS, declarationPath, emitLoaderDts, planDeclarationFiles, type DeclarationForm } from '@kernelpack/codegen'
import { writeFileAtomic } from '@kernelpack/toolchain/atomic-write'
import { buildCudaFile, BuildSession, CompileError, DEFAULT_ARCH, formatDiagnostic, listCudaSources, Pool, type BuildOptions } from '@kernelpack/toolchain'
import type { CliIO } from '../io.js'
import { parseCommandArgs } from '../parse-args.js'
import { UsageError, UserError } from '../errors.js'
import { parseDefine, shown } from '../output.js'

export const help = `Usage: kernelpack types [DIR|FILE.cu]… [options]

Writes the TypeScript declarations of every .cu file under the folders named (default: src, or the current
folder when there is no src), beside each file. Run it before tsc: "build": "kernelpack types && tsc && vite build".
Compiles only the PTX the kernel list is read from, through the compile cache the bundler plugin uses.

  --form F                cu.d.ts (default): <name>.cu.d.ts, for moduleResolution bundler;
                          d.cu.ts: <name>.d.cu.ts, for node16/nodenext (and bundler) with allowArbitraryExtensions.
                          A generated file of the other form is removed (TypeScript would read it first).
  --check                 write nothing; exit 1 when a declaration file is missing or out of date
  --arch SPEC             the targets the bundler builds (default ${DEFAULT_ARCH}); its PTX target is compiled
  --compiler C            nvcc, clang or the path of a compiler (default: nvcc if found, else clang)
  -I DIR                  include directory (repeatable)
  -D NAME[=VALUE]         macro definition (repeatable)
  --std STD               C++ standard, e.g. c++17
  --flag ARG              pass ARG to the compiler as it is (repeatable)
  --launcher CMD          run the compiler through CMD (ccache, sccache)
  --cache-dir DIR         compile cache (default $KERNELPACK_CACHE_DIR or node_modules/.cache/kernelpack)
  -j, --jobs N            compiler processes at once (default: the number of cores)
  -q, --quiet             print only errors
`

function readText(path: string): string | undefined {
  try { return readFileSync(path, 'utf8') } catch { return undefined }
}

export async function run(argv: string[], io: CliIO): Promise<number> {
  const { values, positionals } = parseCommandArgs({
    args: argv,
    options: {
      check: { type: 'boolean' },
      form: { type: 'string' },
      arch: { type: 'string', multiple: true },
      compiler: { type: 'string' },
      include: { type: 'string', short: 'I', multiple: true },
      define: { type: 'string', short: 'D', multiple: true },
      std: { type: 'string' },
      flag: { type: 'string', multiple: true },
      launcher: { type: 'string' },
      'cache-dir': { type: 'string' },
      jobs: { type: 'string', short: 'j' },
      quiet: { type: 'boolean', short: 'q' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
    allowPositionals: true,
  })
  if (values.help) {
    io.stdout(help)
    return 0
  }
  const form = (values.form ?? 'cu.d.ts') as DeclarationForm
  if (!DECLARATION_FORMS.includes(form)) throw new UsageError(`--form must be ${DECLARATION_FORMS.join(' or ')}, not '${values.form}'`)
  let jobs: number | undefined
  if (values.jobs !== undefined) {
    jobs = Number(values.jobs)
    if (!Number.isInteger(jobs) || jobs < 1) throw new UsageError(`--jobs must be a positive integer, not '${values.jobs}'`)
  }

  const roots = positionals.length ? positionals : [existsSync(join(io.cwd, 'src')) ? 'src' : '.']
  const files: string[] = []
  for (const r of roots) {
    const abs = resolve(io.cwd, r)
    let st
    try { st = statSync(abs) } catch { throw new UserError(`${r}: no such file or folder; name the folders that hold your .cu files (default: src)`) }
    if (st.isDirectory()) files.push(...listCudaSources(abs))
    else if (abs.endsWith('.cu')) files.push(abs)
    else throw new UserError(`${r}: not a .cu file or a folder`)
  }
  const unique = [...new Set(files)]
  if (unique.length === 0) {
    if (!values.quiet) io.stderr(`kernelpack types: no .cu files under ${roots.join(', ')}\n`)
    return 0
  }

  const options: BuildOptions = {
    cwd: io.cwd,
    manifestOnly: true,
    includeDirs: values.include ?? [],
    defines: Object.fromEntries((values.define ?? []).map(parseDefine)),
    flags: values.flag ?? [],
    session: new BuildSession(),
  }
  if (values.arch?.length) options.arch = values.arch
  if (values.compiler) options.compiler = values.compiler
  if (values.std) options.std = values.std
  if (values.launcher) options.launcher = values.launcher
  if (values['cache-dir']) options.cacheDir = values['cache-dir']
  if (jobs !== undefined) options.jobs = new Pool(jobs)

  const results = await Promise.allSettled(unique.map((f) => buildCudaFile(f, options)))
  let failed = 0
  const stale: string[] = []
  for (let i = 0; i < unique.length; i++) {
    const file = unique[i]!
    const r = results[i]!
    if (r.status === 'rejected') {
      failed++
      const err = r.reason
      if (err instanceof CompileError) {
        const list = err.diagnostics.map((d) => formatDiagnostic({ ...d, file: shown(io.cwd, d.file) }) + (d.frame ? `\n${d.frame}` : '')).join('\n')
        io.stderr(`kernelpack types: ${shown(io.cwd, file)}: compile failed, no declarations written\n${list}\n`)
        continue
      }
      if (err instanceof Error && (err as { userError?: boolean }).userError) {
        io.stderr(`kernelpack types: ${shown(io.cwd, file)}: ${err.message}\n`)
        continue
      }
      throw err
    }
    const text = emitLoaderDts({ manifest: r.value.manifest, name: shown(io.cwd, file) })
    const plan = planDeclarationFiles(file, text, form, readText)
    if (values.check) {
      stale.push(...(plan.write ? [plan.write] : []), ...plan.remove)
      continue
    }
    if (plan.write) writeFileAtomic(plan.write, text)
    for (const old of plan.remove) rmSync(old, { force: true })
    if (!values.quiet) {
      const n = r.value.manifest.kernels.length
      io.stdout(`${shown(io.cwd, file)} → ${shown(io.cwd, declarationPath(file, form))}${plan.write ? '' : ' (unchanged)'} (${n} kernel${n === 1 ? '' : 's'})\n`)
    }
  }
  if (stale.length) {
    io.stderr(`kernelpack types --check: ${stale.length} declaration file${stale.length === 1 ? ' is' : 's are'} missing or out of date: ${stale.map((p) => shown(io.cwd, p)).join(', ')}; run \`kernelpack types\`\n`)
    return 1
  }
  return failed ? 1 : 0
}
