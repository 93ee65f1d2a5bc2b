// A Node TypeScript project outside the repository, `moduleResolution: nodenext` and `node16` (issue 16,
// "Must show"): `kernelpack types --form d.cu.ts` writes the declaration those resolve (with
// allowArbitraryExtensions), and `tsc` checks a typed `.cu` import against the runtime's compiled
// declarations with skipLibCheck off. Two @ts-expect-error lines in src/main.ts fail the check if the
// launcher's types were too loose to reject a wrong argument.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { repoRoot, tool } from '../helpers/tools.js'
import { installProject, output } from './install.js'
import { packAll } from './pack.js'

tool('nvcc')
const project = installProject('nodenext', packAll())
const env = { KERNELPACK_CACHE_DIR: join(repoRoot, 'test', '.out', 'packaging-cache') }

const node = suite('packaging: nodenext and node16 type-check a .cu import')

node('`kernelpack types --form d.cu.ts && tsc` under nodenext, then node16', () => {
  const r = project.pnpm(['run', 'check'], { env })
  assert.is(r.status, 0, output(r))
  const dts = readFileSync(join(project.dir, 'src', 'saxpy.d.cu.ts'), 'utf8')
  assert.match(dts, 'export declare const saxpy: Launcher<[n: number, a: number, x: DevicePointer, y: DevicePointer]>;')
  assert.match(dts, 'from "@kernelpack/runtime"')
  assert.not.ok(existsSync(join(project.dir, 'src', 'saxpy.cu.d.ts')))
})

node.run()
