#!/usr/bin/env node
// Runs the built CLI (dist, made by `pnpm install`'s prepare step or `pnpm build`); falls back to the
// TypeScript sources through tsx when dist is missing, so a fresh checkout works either way. Only
// node:fs is imported here: each builtin an ES module imports costs a facade module at startup
// (~1 ms each, measured), and pack/unpack of a 64 MiB image take a tenth of a second in all.
import { existsSync } from 'node:fs'

const dist = new URL('../dist/main.js', import.meta.url)
if (existsSync(dist) && !process.env.KERNELPACK_FROM_SOURCE) {
  const { main } = await import(dist.href)
  process.exitCode = await main(process.argv.slice(2))
} else {
  const { register } = await import('tsx/esm/api')
  register()
  const { main } = await import(new URL('../src/main.ts', import.meta.url).href)
  process.exitCode = await main(process.argv.slice(2))
}
