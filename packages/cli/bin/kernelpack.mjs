#!/usr/bin/env node
// Runs the compiled CLI (dist/main.js). Only node:fs is imported here: each builtin an ES module imports
// costs a facade module at startup (~1 ms each, measured), and pack/unpack of a 64 MiB image take a tenth
// of a second in all. Inside the kernelpack repository, KERNELPACK_FROM_SOURCE=1 runs the TypeScript
// sources instead, through the repository's own tsx (a devDependency there, never a dependency of this
// package).
import { existsSync } from 'node:fs'

const dist = new URL('../dist/main.js', import.meta.url)
let main
if (process.env.KERNELPACK_FROM_SOURCE) {
  const { register } = await import('tsx/esm/api')
  register()
  ;({ main } = await import(new URL('../src/main.ts', import.meta.url).href))
} else if (existsSync(dist)) {
  ;({ main } = await import(dist.href))
} else {
  process.stderr.write('kernelpack: the compiled CLI (dist/main.js) is missing: in the kernelpack repository run `pnpm build` (or `pnpm install`); elsewhere reinstall the kernelpack package\n')
  process.exit(1)
}
process.exitCode = await main(process.argv.slice(2))
