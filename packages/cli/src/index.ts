// Programmatic entry of the `kernelpack` command: `await main(['build', 'k.cu', '-o', 'out'])` returns the
// exit status the command line would give (0 ok, 1 user error, 2 bad usage).
export { main, usage, type CliIO, type Command } from './main.js'
export { UsageError, UserError } from './errors.js'
