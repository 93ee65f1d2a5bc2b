// `pnpm demo`: builds examples/webpack-node with unplugin-cuda (its own `pnpm build`) and runs it (its own
// `pnpm start`): the kernel runs on the GPU where an NVIDIA driver answers, else on the PTX emulator. Ends
// with a summary: the compiler, the targets built, the backend that ran and the checked result.
// Exit status: 0 when the example's result was checked, 1 otherwise (no compiler, build or check failed).
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const example = join(root, 'examples', 'webpack-node')

const say = (line = '') => process.stdout.write(line + '\n')
const fail = (lines) => {
  process.stderr.write(`\npnpm demo: ${lines.join('\n')}\n`)
  process.exit(1)
}

/** Runs `pnpm run <script>` in the example folder, echoing its output; resolves with the output text. */
function runScript(script) {
  // Under `pnpm demo`, npm_execpath is the pnpm that runs us; elsewhere use the one on PATH.
  const execpath = process.env.npm_execpath
  const [cmd, args] = execpath && /\.[cm]?js$/.test(execpath)
    ? [process.execPath, [execpath, 'run', script]]
    : ['pnpm', ['run', script]]
  say(`\n$ cd ${relative(root, example)} && pnpm ${script}`)
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: example, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, FORCE_COLOR: '0' } })
    let text = ''
    const echo = (stream) => (d) => { text += d; stream.write(d) }
    child.stdout.on('data', echo(process.stdout))
    child.stderr.on('data', echo(process.stderr))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, text }))
  })
}

// 1. The packages' dist/ (pnpm install's prepare step builds it; rebuild if someone deleted it).
if (!existsSync(join(root, 'packages', 'unplugin', 'dist', 'index.js')) || !existsSync(join(root, 'packages', 'runtime', 'dist', 'index.js'))) {
  say('building packages (node scripts/build.mjs)…')
  await import('./build.mjs')
}
if (!existsSync(join(example, 'node_modules', 'unplugin-cuda'))) {
  fail([`${relative(root, example)} has no node_modules: run \`pnpm install\` at the repository root first.`])
}

// 2. A CUDA compiler: the plugin needs nvcc or clang at build time.
const { findCompiler } = await import('@kernelpack/toolchain')
let compiler
try {
  compiler = await findCompiler()
} catch (err) {
  fail([
    'no CUDA compiler found, so the example cannot be built.',
    `  ${err instanceof Error ? err.message : String(err)}`,
    'Install one of:',
    '  - the CUDA toolkit 12 or 13 (nvcc), e.g. under /usr/local/cuda, with its bin/ on PATH or CUDA_PATH set;',
    '  - clang with CUDA support (Debian/Ubuntu: apt-get install clang-22) plus the CUDA toolkit headers (CUDA_PATH).',
    'Then run `pnpm demo` again.',
  ])
}
say(`compiler: ${compiler.kind} ${compiler.version} (${compiler.path})`)

// 3. Build and run the example with its own scripts, as its README says.
const build = await runScript('build')
if (build.code !== 0) fail([`building ${relative(root, example)} failed (exit ${build.code}); the messages above say why.`])
const start = await runScript('start')

const find = (re) => re.exec(start.text)?.[1]
const backend = find(/^backend: (.+)$/m)
const targets = find(/^images: ([^;]+);/m)
const result = find(/^(saxpy: .+ OK.*)$/m)
say('\n── kernelpack demo ─────────────────────────────────────────────')
say(`example:  ${relative(root, example)} (webpack + unplugin-cuda)`)
say(`compiler: ${compiler.kind} ${compiler.version}`)
say(`targets:  ${targets ?? '?'}`)
say(`backend:  ${backend ?? '?'}`)
if (start.code !== 0 || !result) fail([`running ${relative(root, example)} failed (exit ${start.code}); the messages above say why.`])
say(`result:   ${result} (checked against JavaScript)`)
