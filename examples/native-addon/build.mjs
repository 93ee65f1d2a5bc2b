// Builds the addon: nvcc → sm_90 cubin + PTX, `kernelpack pack` → gen/vecadd.offload, the PTX manifest,
// `kernelpack wrapper --flavor cuda` → gen/vecadd.wrapper.{c,h}, then node-gyp in native/ → the .node file.
// (binding.gyp sits in native/ so that pnpm install does not run node-gyp before gen/ exists.)
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { readPtxManifest } from '@kernelpack/toolchain'

const here = import.meta.dirname
const gen = join(here, 'gen')
const cuda = process.env.CUDA_PATH ?? '/usr/local/cuda'
const kernelpack = join(here, '..', '..', 'packages', 'cli', 'bin', 'kernelpack.mjs')
const run = (cmd, args) => execFileSync(cmd, args, { cwd: here, stdio: ['ignore', 'inherit', 'inherit'] })
const node = (args) => run(process.execPath, [...process.execArgv, ...args])

mkdirSync(gen, { recursive: true })
run(join(cuda, 'bin', 'nvcc'), ['-cubin', '-arch=sm_90', 'vecadd.cu', '-o', 'gen/vecadd.sm_90.cubin'])
run(join(cuda, 'bin', 'nvcc'), ['-ptx', '-arch=sm_90', 'vecadd.cu', '-o', 'gen/vecadd.sm_90.s'])
node([kernelpack, 'pack', '-o', 'gen/vecadd.offload',
  '--image=file=gen/vecadd.sm_90.cubin,triple=nvptx64-nvidia-cuda,arch=sm_90,kind=cuda',
  '--image=file=gen/vecadd.sm_90.s,triple=nvptx64-nvidia-cuda,arch=sm_90,kind=cuda'])
const manifest = await readPtxManifest(readFileSync(join(gen, 'vecadd.sm_90.s'), 'utf8'))
writeFileSync(join(gen, 'vecadd.manifest.json'), JSON.stringify({ ...manifest, source: 'vecadd.cu' }, null, 2) + '\n')
node([kernelpack, 'wrapper', '--flavor', 'cuda', '--offload', 'gen/vecadd.offload', '--manifest', 'gen/vecadd.manifest.json', '-o', 'gen/vecadd.wrapper.c', '--hostrefs'])

// node-gyp as npm bundles it, with the Node headers npm is configured with (no download).
const bundled = (root) => join(root, 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js')
let gyp = process.env.npm_config_node_gyp ?? bundled(join(dirname(process.execPath), '..', 'lib', 'node_modules'))
if (!existsSync(gyp)) gyp = bundled(execFileSync('npm', ['root', '-g'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim())
let nodedir = process.env.npm_config_nodedir
if (!nodedir) nodedir = execFileSync('npm', ['config', 'get', 'nodedir'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim()
const gypArgs = ['rebuild', '--loglevel=warn', ...(nodedir && nodedir !== 'undefined' && existsSync(nodedir) ? [`--nodedir=${nodedir}`] : [])]
execFileSync(process.execPath, [gyp, ...gypArgs], { cwd: join(here, 'native'), stdio: ['ignore', 'inherit', 'inherit'] })
