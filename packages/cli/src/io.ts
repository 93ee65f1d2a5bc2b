// What a command writes to and where it runs: the terminal for the `kernelpack` binary, buffers in tests.
// Its own module, so that the commands and main.ts (which loads them) both import it and not each other.

export interface CliIO {
  stdout: (text: string) => void
  stderr: (text: string) => void
  cwd: string
}

export type Command = (args: string[], io: CliIO) => Promise<number>
