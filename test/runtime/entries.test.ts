// The two entries of @kernelpack/runtime: the browser entry pulls in no Node built-in and no koffi; the Node
// entry reaches koffi and node:fs only through dynamic imports, so importing the runtime stays cheap.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { join } from 'node:path'
import { build, type Metafile } from 'esbuild'
import { repoRoot, tempDir } from '../helpers/tools.js'

const src = join(repoRoot, 'packages', 'runtime', 'src')

/** Every input reachable from `entry` through static imports only, as the paths esbuild records. */
function staticClosure(meta: Metafile, entry: string): Set<string> {
  const seen = new Set<string>()
  const stack = [entry]
  while (stack.length) {
    const p = stack.pop()!
    if (seen.has(p)) continue
    seen.add(p)
    for (const imp of meta.inputs[p]?.imports ?? []) if (imp.kind === 'import-statement') stack.push(imp.path)
  }
  return seen
}

async function graph(entry: string, platform: 'browser' | 'node', conditions: string[]) {
  const r = await build({
    entryPoints: [join(src, entry)], bundle: true, write: false, metafile: true, format: 'esm', platform, conditions,
    splitting: true, outdir: tempDir('kp-runtime-entries-'), logLevel: 'silent', external: platform === 'node' ? ['koffi'] : [],
  })
  const entryKey = Object.keys(r.metafile.inputs).find((k) => k.endsWith(`runtime/src/${entry}`))!
  return { meta: r.metafile, closure: staticClosure(r.metafile, entryKey), all: Object.keys(r.metafile.inputs) }
}

// ---
const Browser = suite('browser entry')

Browser('bundles for the browser with no Node built-in and no koffi anywhere in its graph', async () => {
  const { all } = await graph('browser.ts', 'browser', ['source', 'browser'])
  assert.ok(all.some((p) => p.includes('emulator/src')), 'the emulator is reachable')
  assert.equal(all.filter((p) => p.includes('koffi') || p.startsWith('node:') || p.includes('cuda-backend')), [])
})

Browser.run()

// ---
const Node = suite('node entry')

Node('koffi, node:fs and the cuda backend are reached only through dynamic import', async () => {
  const { closure, meta } = await graph('index.ts', 'node', ['source'])
  assert.equal([...closure].filter((p) => p.includes('koffi') || p.startsWith('node:') || p.includes('cuda-backend') || p.includes('emulator/src')), [])
  const dynamic = Object.values(meta.inputs).flatMap((i) => i.imports.filter((x) => x.kind === 'dynamic-import').map((x) => x.path))
  assert.ok(dynamic.some((p) => p.includes('cuda-backend')), 'cuda backend is a dynamic import')
  assert.ok(dynamic.includes('node:fs/promises'), 'node:fs/promises is a dynamic import')
})

Node.run()
