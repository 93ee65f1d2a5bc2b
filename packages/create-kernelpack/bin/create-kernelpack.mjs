#!/usr/bin/env node
// `npm create kernelpack@latest [folder] -- --template vite|node|library`: runs the compiled scaffolder.
import { main } from '../dist/index.js'

process.exitCode = await main(process.argv.slice(2))
