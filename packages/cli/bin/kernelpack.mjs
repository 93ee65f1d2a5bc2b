#!/usr/bin/env node
// Runs the built CLI (dist, made by `pnpm install`'s prepare step or `pnpm build`); falls back to the
// TypeScript sources through tsx when dist is missing, so a fresh checkout works either way.
import { existsSync } from 'node:fs'

const dist = new URL('../dist/main.js', import.meta.url)
if (existsSync(dist) && !process.env.KERNELPACK_FROM_SOURCE) {
  // Node loads an ES module graph one import level per file-read round trip, so loading main.js and
  // then the command's modules would queue the two graphs one after the other. The offload commands
  // run in a tenth of a second, where that wait shows: start their graph alongside main.js (main's
  // own import of it then finds it loaded). A failure here is main's to report, so it is dropped.
  const name = process.argv[2]
  if (name === 'pack' || name === 'unpack' || name === 'inspect') import(new URL(`../dist/commands/${name}.js`, import.meta.url).href).catch(() => {})
  const { main } = await import(dist.href)
  process.exitCode = await main(process.argv.slice(2))
} else {
  const { register } = await import('tsx/esm/api')
  register()
  const { main } = await import(new URL('../src/main.ts', import.meta.url).href)
  process.exitCode = await main(process.argv.slice(2))
}
