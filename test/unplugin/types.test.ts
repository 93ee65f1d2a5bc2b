// The .d.ts the plugin writes beside each .cu types the imports: `tsc --noEmit` passes on the first run
// and fails on a wrong argument type, naming the file and line.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { writeCudaTypes } from 'unplugin-cuda'
import { copyFixture, unpluginCacheDir } from '../helpers/bundlers.js'
import { repoRoot } from '../helpers/tools.js'

const tscBin = join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc')
const tsc = (cwd: string) => spawnSync(process.execPath, [tscBin, '-p', 'tsconfig.json', '--noEmit'], { cwd, encoding: 'utf8' })

// ---
const types = suite('writeCudaTypes')

types('writes kernels.cu.d.ts before any bundler runs; tsc passes first time, then fails on a wrong argument', async () => {
  const root = copyFixture('app', 'types')
  assert.not.ok(existsSync(join(root, 'src', 'kernels.cu.d.ts')))
  const typed = await writeCudaTypes({ cacheDir: unpluginCacheDir }, root)
  assert.equal(typed, [join(root, 'src', 'kernels.cu')])
  const dts = readFileSync(join(root, 'src', 'kernels.cu.d.ts'), 'utf8')
  // parameter names and pointers from the .cu source (PTX has neither for extern "C" kernels)
  assert.match(dts, 'export declare const vecAdd: Launcher<[a: DevicePointer, b: DevicePointer, c: DevicePointer, n: number]>;')
  assert.match(dts, 'export declare const scale_int: Launcher<[x: DevicePointer, s: number, n: number]>;')
  // one form only: where both exist TypeScript reads kernels.d.cu.ts, which needs allowArbitraryExtensions
  assert.not.ok(existsSync(join(root, 'src', 'kernels.d.cu.ts')))

  const ok = tsc(root)
  assert.is(ok.status, 0, `tsc passes:\n${ok.stdout}${ok.stderr}`)

  const typed2 = readFileSync(join(root, 'src', 'typed.ts'), 'utf8').replace('scale_int({ grid: 1, block: 4 }, c, 2, 4)', 'scale_int({ grid: 1, block: 4 }, c, "2", 4)')
  writeFileSync(join(root, 'src', 'typed.ts'), typed2)
  const bad = tsc(root)
  assert.is.not(bad.status, 0, 'tsc fails on a string where the kernel takes an int')
  assert.match(bad.stdout, /src\/typed\.ts\(8,\d+\): error TS2345/)
  assert.match(bad.stdout, 'string')
})

types.run()
