// The sanitizer page: the same block sum with and without its barrier, loaded with loadModule and the
// emulator's checks in collect mode, so the racy kernel's report shows on the page and the fixed one runs
// clean. `?url` and `?manifest` give what loadModule takes; the stub's module would take the plugin's
// `check` option instead, for every .cu of the build.
import { loadModule, type Module, type SanitizerReport } from '@kernelpack/runtime'
import type { Example } from '../../.vitepress/theme/example.js'
import { blockSumsReference, firstMismatch, sanitizerData, sanitizerInput } from './reference.js'
import url from './sanitizer.cu?url'
import manifest from './sanitizer.cu?manifest'

const { blocks, block } = sanitizerInput
let loaded: Module | undefined

async function unload(): Promise<void> {
  const m = loaded
  loaded = undefined
  await m?.unload()
}

/** What the page shows of a report: compute-sanitizer's text. */
const messages = (reports: SanitizerReport[]) => reports.map((r) => r.message)

/** `/where/the/site/was/built/sanitizer.cu:12` → `sanitizer.cu:12`: the PTX names the file as the compiler
 *  was given it, an absolute path on the machine that built the site. */
const shortenPaths = (text: string) => text.replace(/(?:[\w.-]*\/)+([\w.-]+\.cu)/g, '$1')

export default {
  title: 'sanitizer',
  // the checks run on the PTX emulator: `auto` picks it, `webgpu` refuses a check
  backends: ['auto', 'emulator'],
  canvas: false,
  verdict: 'sumRacy is reported, and sumFixed runs clean with the sums of the JavaScript reference',
  async load(backend) {
    await unload()
    loaded = await loadModule(url, manifest, { backend, check: { mode: 'collect' } })
    return loaded
  },
  unload,
  async prepare(mod) {
    const data = sanitizerData()
    const input = await mod.upload(data), racy = await mod.alloc(4 * blocks), fixed = await mod.alloc(4 * blocks)
    let racyReports: SanitizerReport[] = [], fixedReports: SanitizerReport[] = []
    return {
      launches: 2,
      async launch() {
        mod.sanitizerReports()   // start from none
        await mod.kernel('sumRacy').launch({ grid: blocks, block }, input, racy)
        await mod.synchronize()
        racyReports = mod.sanitizerReports()
        await mod.kernel('sumFixed').launch({ grid: blocks, block }, input, fixed)
        await mod.synchronize()
        fixedReports = mod.sanitizerReports()
      },
      read: async () => ({
        racy: await racy.download(new Int32Array(blocks)),
        fixed: await fixed.download(new Int32Array(blocks)),
        racyReports: messages(racyReports),
        fixedReports: messages(fixedReports),
      }),
      free: async () => { await Promise.all([input.free(), racy.free(), fixed.free()]) },
    }
  },
  check(output) {
    // the racy kernel's sums may be right or wrong: what must hold is that it is reported and the fix is not
    if ((output.racyReports as string[]).length === 0) return 'the sanitizer reported nothing for sumRacy'
    if ((output.fixedReports as string[]).length > 0) return `the sanitizer reported sumFixed: ${(output.fixedReports as string[])[0]}`
    return firstMismatch(output.fixed as Int32Array, blockSumsReference(sanitizerData()))
  },
  show(view, output) {
    const want = blockSumsReference(sanitizerData())
    const racy = output.racy as Int32Array
    const wrong = racy.filter((v, i) => v !== want[i]).length
    const reports = output.racyReports as string[]
    view.caption(`sumFixed: ${blocks} block sums, all right, no report. sumRacy: ${wrong} of ${blocks} sums wrong on this run; ${reports.length} distinct report${reports.length === 1 ? '' : 's'}:`)
    view.details(shortenPaths(reports.join('\n\n')))
  },
} satisfies Example
