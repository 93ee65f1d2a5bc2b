// `kernelpack` entry: routes to one file per command under commands/. Exit status: 0 ok, 1 user error,
// 2 bad usage (DESIGN.md, "Contracts").
import { UsageError, UserError } from './errors.js'

import type { CliIO, Command } from './io.js'

export type { CliIO, Command } from './io.js'

const commands: Record<string, { summary: string; load: () => Promise<{ run: Command }> }> = {
  pack: { summary: 'pack images into an offload binary (llvm-offload-binary -o OUT --image=…)', load: () => import('./commands/pack.js') },
  unpack: { summary: 'extract images from an offload binary (llvm-offload-binary IN --image=…)', load: () => import('./commands/unpack.js') },
  inspect: { summary: 'list the images of offload binaries (--json for machines)', load: () => import('./commands/inspect.js') },
  build: { summary: 'compile .cu files for GPU targets into DIR/<name>.offload + manifest', load: () => import('./commands/build.js') },
  types: { summary: 'write the TypeScript declarations of every .cu file (before tsc)', load: () => import('./commands/types.js') },
  hostrefs: { summary: 'print cudafe++-style .nvHR* host-reference arrays for PTX symbols', load: () => import('./commands/hostrefs.js') },
  wrapper: { summary: 'emit wrapper C that registers device images (offload, legacy, cuda)', load: () => import('./commands/wrapper.js') },
}

export function usage(): string {
  const width = Math.max(...Object.keys(commands).map((c) => c.length))
  return [
    'Usage: kernelpack <command> [options]',
    '',
    'Commands:',
    ...Object.entries(commands).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`),
    '',
    'Run `kernelpack <command> --help` for the options of one command.',
  ].join('\n') + '\n'
}

const defaultIO: CliIO = {
  stdout: (t) => process.stdout.write(t),
  stderr: (t) => process.stderr.write(t),
  cwd: process.cwd(),
}

export async function main(argv: string[], io: CliIO = defaultIO): Promise<number> {
  const [name, ...rest] = argv
  if (!name || name === 'help' || name === '--help' || name === '-h') {
    io.stdout(usage())
    return name ? 0 : 2
  }
  if (name === '--version' || name === '-V') {
    io.stdout('kernelpack 0.1.0\n')
    return 0
  }
  const command = commands[name]
  if (!command) {
    io.stderr(`kernelpack: unknown command '${name}'\n\n${usage()}`)
    return 2
  }
  try {
    const { run } = await command.load()
    return await run(rest, io)
  } catch (err) {
    if (err instanceof UsageError) {
      io.stderr(`kernelpack ${name}: ${err.message}\nRun \`kernelpack ${name} --help\` for usage.\n`)
      return 2
    }
    if (err instanceof UserError || (err instanceof Error && (err as { userError?: boolean }).userError)) {
      io.stderr(`kernelpack ${name}: ${err.message}\n`)
      return 1
    }
    if (err instanceof Error && (err.name === 'DecodeError' || err.name === 'RangeError' || err.name === 'CompileError' || (err as NodeJS.ErrnoException).code === 'ENOENT')) {
      io.stderr(`kernelpack ${name}: ${err.message}\n`)
      return 1
    }
    throw err
  }
}
