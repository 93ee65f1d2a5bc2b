// The interpreter fallback (issue 14 item 3): where code generation from strings is refused (a page's
// Content-Security-Policy without 'unsafe-eval'; Node's --disallow-code-generation-from-strings stands for it
// here, test/runtime/browser.test.ts runs the real CSP in chromium), the emulator runs the very code it
// generates on its interpreter. Here: the emulator's own corpus (nvcc compute_80) through the interpreter, case
// by case against the same TypeScript references as corpus.test.ts; and in a Node process that refuses code
// generation, the backend's clear error without it and the runtime picking it with its reason.
import { execFileSync } from 'node:child_process'
import { join } from 'node:path'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { createEmulatorBackend, loadInterpreter } from '@kernelpack/emulator'
import { interpretFactory } from '../../packages/emulator/src/js/interpret.js'
import { compilePtx, corpusConfigs } from '../helpers/ptx-cache.js'
import { KernelRunner } from '../helpers/kernel-runner.js'
import { repoRoot } from '../helpers/tools.js'
import { ownCases, ownSource } from '../fixtures/emulator/cases-own.js'

const config = corpusConfigs.find((c) => c.label === 'nvcc compute_80')!
const ptx = await compilePtx({ source: ownSource, config })

const corpus = suite<{ k?: KernelRunner; dispose?: () => unknown }>('interpreter: own corpus, nvcc compute_80', {})
corpus.before(async (ctx) => {
  const printed: string[] = []
  const backend = createEmulatorBackend({ workers: 0, evaluate: await loadInterpreter(), print: (text) => printed.push(text) })
  assert.match(backend.describeExecution(), /^launches run on the calling thread: kernels run through the emulator's interpreter/)
  ctx.dispose = () => backend.dispose()
  ctx.k = await KernelRunner.load(backend, ptx, config.target, 'corpus-own.cu (interpreted)', printed)
})
corpus.after(async (ctx) => { await ctx.dispose?.() })
for (const c of ownCases) {
  corpus(`${c.file}: ${c.name}`, async (ctx) => {
    ctx.k!.printed.length = 0
    await c.run(ctx.k!)
  })
}
corpus.run()

const refusing = suite('a Node process that refuses code generation from strings')
refusing('the backend without the interpreter says what to do; the runtime picks the interpreter, runs saxpy on the wasm tier beside it and says why', () => {
  const out = execFileSync(process.execPath, ['--disallow-code-generation-from-strings', '--conditions=source', '--import', 'tsx',
    join(repoRoot, 'test', 'fixtures', 'emulator', 'no-eval', 'run.ts')], { cwd: repoRoot, encoding: 'utf8' })
  const r = JSON.parse(out.trim().split('\n').pop()!) as { refused: string; tier: string; reason: string; out: number[] }
  assert.is(r.refused, "the emulator cannot compile kernels in this context: Code generation from strings disallowed for this context. Create the backend with { evaluate: await loadInterpreter() } (@kernelpack/runtime does where it has to) to run them through the interpreter, or allow 'unsafe-eval' in the page's Content-Security-Policy")
  assert.is(r.reason, "backend 'emulator' was requested; launches run on the calling thread: kernels run through the emulator's interpreter (same results, slower) because this context refuses to compile generated code (Code generation from strings disallowed for this context)" +
    "; kernels with a WebAssembly lowering run on the emulator's WebAssembly tier instead, which this context compiles")
  // V8 refuses strings but not WebAssembly under --disallow-code-generation-from-strings (issue 24 item 5)
  assert.is(r.tier, 'tier: WebAssembly')
  const f = Math.fround
  assert.equal(r.out, Array.from({ length: 100 }, (_, i) => f(f(2.5 * f(i * 0.25)) + (7 - i))))
})
refusing.run()

const subset = suite('the interpreted subset')
subset('JavaScript semantics the emitters rely on, and constructs outside the subset refused by name', () => {
  const run = (body: string) => interpretFactory('E', body)({ k: 3 })
  assert.is(run('let i=0; L1:for(;;){ i++; if(i<5){continue L1;} break;} return i'), 5)
  assert.is(run('let i=0; L1:for(;;){ i++; if(i<5){continue;} break;} return i'), 5)
  assert.is(run('let s=0; TH:for(let t=0;t<4;t++){ B0:{ if(t===1) break B0; if(t===2) continue TH; s+=t } s+=10 } return s'), 0 + 10 + 10 + 3 + 10)
  assert.is(run('function f(n){switch(n){case 1: return "a"; case 2: case 3: n*=2; break; default: return "d"} return n} return f(1)+f(3)+f(9)'), 'a6d')
  assert.is(run('const {k}=E; let x=0x10n; x<<=2n; return String(x*BigInt(k))+typeof y+typeof E'), '192undefinedobject')
  assert.is(run('const h=new Int32Array(2); let i=0; h[i++]+=-1; return [h[0]>>>0, i, (1<<31)|0, -7%3, 2**10].join()'), '4294967295,1,-2147483648,-1,1024')
  assert.is(run('const o={ v: 1, inc(d){ o.v += d; return o } }; return o.inc(2).inc(3).v'), 6)
  for (const [body, what] of [['return () => 1', 'arrow functions'], ['try { } catch (e) { }', '`try`'], ['return `x`', 'template literals'],
    ['for (let i=0;i<2;i++) { const g = function(){ return i } }', 'a function created inside a loop'], ['return this', '`this`']] as const) {
    assert.throws(() => run(body), (e: Error) => e instanceof SyntaxError && e.message.includes(`does not support ${what}`), body)
  }
})
subset.run()
