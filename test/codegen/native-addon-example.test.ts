import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { execFileSync } from 'node:child_process'
import { join } from 'node:path'
import { repoRoot, tool } from '../helpers/tools.js'

// examples/native-addon: nvcc → kernelpack pack → kernelpack wrapper --flavor cuda → node-gyp → .node.
const example = join(repoRoot, 'examples', 'native-addon')
const addon = join(example, 'native', 'build', 'Release', 'kp_native_addon.node')
const env = { ...process.env, KERNELPACK_FROM_SOURCE: '1', NODE_OPTIONS: '' }
const node = (args: string[]) => execFileSync(process.execPath, args, { cwd: example, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })

// ---
const nativeAddon = suite('examples/native-addon')

nativeAddon('builds with node-gyp from the wrapper C, loads in Node and names its kernels', () => {
  tool('nvcc')
  node(['--conditions=source', '--import', 'tsx', 'build.mjs'])
  const out = node(['main.mjs'])
  assert.match(out, /^kernel vecAdd$/m)
  assert.match(out, /^kernel _Z5scalePffi$/m)
  assert.match(out, /no GPU|vecAdd on/)
  // The images and the host-reference arrays are in the .node file; the host symbols are exported.
  const sections = execFileSync(tool('llvm-readelf'), ['-S', '--wide', addon], { encoding: 'utf8' })
  for (const s of ['.nv_fatbin', '.nvFatBinSegment', '.nvHRKE']) assert.ok(sections.includes(` ${s} `), s)
  const dyn = execFileSync('nm', ['-D', '--defined-only', addon], { encoding: 'utf8' })
  assert.match(dyn, / kp_vecadd_vecAdd$/m)
  assert.match(dyn, / kp_vecadd__Z5scalePffi$/m)
})

nativeAddon.run()
