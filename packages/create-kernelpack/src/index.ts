// `npm create kernelpack@latest`: a new project with one `.cu`, TypeScript, `kernelpack types` before `tsc`,
// one test and a README, from one of three templates (vite: a browser page; node: a Node app through the
// Node hook; library: a Rollup-built package shipping its kernels). No prompt when a folder and a template
// are given (CI); prompts otherwise, on a terminal. A folder that is not empty is refused unless --force.
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { basename, dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createInterface } from 'node:readline/promises'

export const TEMPLATES = ['vite', 'node', 'library'] as const
export type TemplateName = (typeof TEMPLATES)[number]

const DESCRIPTIONS: Record<TemplateName, string> = {
  vite: 'a web page built by Vite; the kernel runs on WebGPU or the emulator in the browser, tested with Vitest',
  node: 'a Node app that imports its .cu through the Node hook (no bundler), tested with node --test',
  library: 'a package built by Rollup that ships its kernels, tested with node --test',
}

const here = dirname(fileURLToPath(import.meta.url))
/** The templates folder, beside dist/ (and src/) in the package. */
export const templatesDir = join(here, '..', 'templates')

export interface ScaffoldOptions {
  /** The folder to create the project in (created if missing). */
  dir: string
  template: TemplateName
  /** The package name. @default the folder's name, made a valid package name */
  name?: string
  /** Write into a folder that is not empty. @default false */
  force?: boolean
}

/** A valid package name from a folder name: lower case, `-` for anything else. */
export function packageName(dir: string): string {
  const n = basename(resolve(dir)).toLowerCase().replace(/[^a-z0-9._~-]+/g, '-').replace(/^[._-]+|[._-]+$/g, '')
  return n || 'kernelpack-app'
}

// Files a template keeps under another name: npm drops .gitignore from tarballs, and a package.json inside
// the package would read as a nested package to tools.
const RENAMED: Record<string, string> = { gitignore: '.gitignore', 'package.json': 'package.json' }

function ownVersion(): string {
  return (JSON.parse(readFileSync(join(here, '..', 'package.json'), 'utf8')) as { version: string }).version
}

function listFiles(dir: string): string[] {
  return readdirSync(dir).sort().flatMap((n) => {
    const p = join(dir, n)
    return statSync(p).isDirectory() ? listFiles(p) : [p]
  })
}

/**
 * Writes the template into `options.dir` and returns the files written (relative). `{{name}}` becomes the
 * package name and `{{kernelpack}}` the version range of kernelpack's packages (this package's own version);
 * `_gitignore` becomes `.gitignore` and `_package.json` `package.json` (see RENAMED). Throws an Error naming the
 * folder when it is not empty and `force` is not set, and naming the templates for an unknown one.
 */
export function scaffold(options: ScaffoldOptions): string[] {
  const { template } = options
  if (!TEMPLATES.includes(template)) throw new Error(`create-kernelpack: unknown template ${JSON.stringify(template)}; the templates are ${TEMPLATES.join(', ')}`)
  const dir = resolve(options.dir)
  if (existsSync(dir) && readdirSync(dir).length > 0 && !options.force) {
    throw new Error(`create-kernelpack: ${dir} is not empty; choose a new folder, or pass --force to write into it anyway`)
  }
  const name = options.name ?? packageName(dir)
  const vars: Record<string, string> = { name, kernelpack: `^${ownVersion()}` }
  const src = join(templatesDir, template)
  const written: string[] = []
  for (const file of listFiles(src)) {
    const rel = relative(src, file).split('\\').join('/').replace(/(^|\/)_(gitignore|package\.json)$/, (_m, dir: string, f: string) => `${dir}${RENAMED[f]}`)
    const out = join(dir, rel)
    mkdirSync(dirname(out), { recursive: true })
    const text = readFileSync(file, 'utf8').replace(/\{\{(name|kernelpack)\}\}/g, (_m, k: string) => vars[k]!)
    writeFileSync(out, text)
    written.push(rel)
  }
  return written
}

export interface CliIO {
  stdout: (text: string) => void
  stderr: (text: string) => void
  /** True when questions can be asked (a terminal). */
  interactive: boolean
  ask?: (question: string) => Promise<string>
  cwd: string
}

const USAGE = `Usage: npm create kernelpack@latest [folder] -- --template <${TEMPLATES.join('|')}> [--force]

Templates:
${TEMPLATES.map((t) => `  ${t.padEnd(8)} ${DESCRIPTIONS[t]}`).join('\n')}
`

/** The command line: `[folder] [--template|-t name] [--force] [--help]`. Returns the exit status. */
export async function main(argv: string[], io: CliIO = processIO()): Promise<number> {
  let dir: string | undefined
  let template: string | undefined
  let force = false
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!
    if (a === '--help' || a === '-h') { io.stdout(USAGE); return 0 }
    else if (a === '--force' || a === '-f') force = true
    else if (a === '--template' || a === '-t') template = argv[++i]
    else if (a.startsWith('--template=')) template = a.slice('--template='.length)
    else if (a.startsWith('-')) { io.stderr(`create-kernelpack: unknown option ${a}\n\n${USAGE}`); return 2 }
    else if (dir === undefined) dir = a
    else { io.stderr(`create-kernelpack: one folder, got ${dir} and ${a}\n\n${USAGE}`); return 2 }
  }
  if ((dir === undefined || template === undefined) && !(io.interactive && io.ask)) {
    io.stderr(`create-kernelpack: ${dir === undefined ? 'a folder' : 'a template'} is needed (no terminal to ask on)\n\n${USAGE}`)
    return 2
  }
  if (dir === undefined) dir = (await io.ask!('Project folder: (kernelpack-app) ')).trim() || 'kernelpack-app'
  while (template === undefined) {
    const answer = (await io.ask!(`Template (${TEMPLATES.join(', ')}): (vite) `)).trim() || 'vite'
    if (TEMPLATES.includes(answer as TemplateName)) template = answer
    else io.stderr(`not a template: ${answer}\n`)
  }
  try {
    const target = resolve(io.cwd, dir)
    const files = scaffold({ dir: target, template: template as TemplateName, force })
    const rel = relative(io.cwd, target) || '.'
    io.stdout(`Created ${rel} from the ${template} template (${files.length} files).\n\nNext:\n  cd ${rel}\n  npm install\n  npm test\n\nBuilding needs nvcc (CUDA 12+) or clang with CUDA; running needs no GPU (the emulator runs the kernel where there is none).\n`)
    return 0
  } catch (err) {
    io.stderr(`${(err as Error).message}\n`)
    return 1
  }
}

function processIO(): CliIO {
  const interactive = !!process.stdin.isTTY && !!process.stdout.isTTY
  return {
    stdout: (t) => process.stdout.write(t),
    stderr: (t) => process.stderr.write(t),
    interactive,
    cwd: process.cwd(),
    ask: async (q) => {
      const rl = createInterface({ input: process.stdin, output: process.stdout })
      try { return await rl.question(q) } finally { rl.close() }
    },
  }
}
