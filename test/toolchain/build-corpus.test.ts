// The reference corpus (test/fixtures/reference-cu, from shared/reference/cu) built with nvcc and with
// clang 22 for `80-real;90`, each file once per compiler (a fresh per-file cache), then checked against
// the real tools: the manifest against ptxas's cubin (kernel symbols, binding, EIATTR_KPARAM_INFO sizes and
// offsets), the two compilers against each other, and the .offload against llvm-offload-binary (packing
// the same images gives the same bytes) and llvm-objdump --offloading.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { KernelInfo } from '@kernelpack/offload'
import { buildCudaFile, BuildSession, imageStrings, nameKernelParams, readPtxManifest, type BuildResult } from '@kernelpack/toolchain'
import { fixturesDir, tempDir, tool } from '../helpers/tools.js'
import { exec } from './exec.js'
import { bindOf, layout, readCubinSymbols, readKernelParams } from './cubin.js'

const cuDir = join(fixturesDir, 'reference-cu')
const files = readdirSync(cuDir).filter((f) => f.endsWith('.cu') && f !== 'bad.cu').sort()
const cacheDir = tempDir('kp-corpus-cache-')
const work = tempDir('kp-corpus-')
const arch = '80-real;90'
tool('nvcc')
tool('clang++')

const session = new BuildSession()
const builds: Record<'nvcc' | 'clang', BuildResult[]> = {
  nvcc: await Promise.all(files.map((f) => buildCudaFile(join(cuDir, f), { arch, compiler: 'nvcc', cacheDir, session }))),
  clang: await Promise.all(files.map((f) => buildCudaFile(join(cuDir, f), { arch, compiler: tool('clang++'), cacheDir, session }))),
}


// ---

const build = suite('buildCudaFile (reference corpus)')

build('every file builds with both compilers: sm_80 and sm_90 cubins plus compute_90 PTX', () => {
  assert.is(files.length, 8)
  for (const compiler of ['nvcc', 'clang'] as const) {
    for (const r of builds[compiler]) {
      assert.equal(r.images.map((i) => [i.target, i.arch, i.kind]), [['sm_80', 'sm_80', 'cubin'], ['sm_90', 'sm_90', 'cubin'], ['compute_90', 'sm_90', 'ptx']], r.name)
      assert.ok(r.images[0]!.bytes[0] === 0x7f && r.images[1]!.bytes[0] === 0x7f, `${r.name}: cubins are ELF`)
      assert.match(new TextDecoder().decode(r.images[2]!.bytes), /^\s*\.target sm_90\b/m)
      assert.is(r.manifest.source, `${r.name}.cu`)
      assert.match(r.manifest.producer!, compiler === 'nvcc' ? /^nvcc 13\.\d+\.\d+$/ : /^clang 22\.\d+\.\d+$/)
      assert.is(r.dependencies[0], join(cuDir, `${r.name}.cu`))
      assert.ok(r.dependencies.some((d) => d.endsWith('/cuda_runtime.h')), `${r.name}: dependencies list the included headers`)
    }
  }
})

/** Kernels without the compiler-read layouts (what the PTX alone gives). */
function withoutValueTypes(kernels: KernelInfo[]): KernelInfo[] {
  return kernels.map((k) => ({ ...k, params: k.params.map(({ valueType: _v, valueTypeNote: _n, ...p }) => p) }))
}

build('manifest = the PTX image read again, and it matches ptxas\'s sm_90 cubin (kernels, binding, param sizes and offsets)', async () => {
  for (const compiler of ['nvcc', 'clang'] as const) {
    for (const r of builds[compiler]) {
      // plus the parameter names (and pointers) the .cu source gives (param-names.test.ts)
      // (the struct layouts the host compile's DWARF adds are checked below, against ptxas and the other compiler)
      const again = nameKernelParams(await readPtxManifest(new TextDecoder().decode(r.images[2]!.bytes)), [readFileSync(join(cuDir, `${r.name}.cu`), 'utf8')])
      assert.equal(withoutValueTypes(r.manifest.kernels), again.kernels, `${compiler} ${r.name}`)
      assert.equal(r.manifest.variables, again.variables, `${compiler} ${r.name}`)
      const elf = r.images[1]!.bytes
      const entries = readCubinSymbols(elf).filter((s) => s.type === 'FUNC' && s.entry)
      assert.equal(r.manifest.kernels.map((k) => k.name).sort(), entries.map((s) => s.name).sort(), `${compiler} ${r.name}: kernels`)
      for (const k of r.manifest.kernels) {
        assert.is(entries.find((s) => s.name === k.name)!.bind, bindOf[k.linkage], `${compiler} ${r.name} ${k.name}: linkage`)
        const params = readKernelParams(elf, k.name) ?? []
        assert.equal(k.params.map((p) => p.size), params.map((p) => p.size), `${compiler} ${r.name} ${k.name}: sizes`)
        assert.equal(layout(k), params.map((p) => p.offset), `${compiler} ${r.name} ${k.name}: alignments`)
      }
    }
  }
})

build('nvcc and clang agree on every external kernel: name, demangled name, parameter sizes, alignments, pointers', () => {
  for (let i = 0; i < files.length; i++) {
    const n = builds.nvcc[i]!.manifest
    const c = builds.clang[i]!.manifest
    const external = (ks: KernelInfo[]) => ks.filter((k) => k.linkage !== 'internal').map((k) => k.name).sort()
    // clang gives `static` kernels external linkage in whole-program mode (`_ZL…`), nvcc keeps them
    // internal: every kernel nvcc exports must be exported by clang too.
    const clangNames = external(c.kernels)
    for (const name of external(n.kernels)) assert.ok(clangNames.includes(name), `${files[i]}: ${name} missing from clang's manifest`)
    for (const name of external(n.kernels)) {
      const a = n.kernels.find((k) => k.name === name)!
      const b = c.kernels.find((k) => k.name === name)!
      assert.equal(a.params.map((p) => [p.size, p.align]), b.params.map((p) => [p.size, p.align]), `${files[i]} ${name}`)
      // clang marks pointers with .ptr; nvcc's PTX does not, so for nvcc they come from the C++ signature,
      // which extern "C" kernels lack.
      if (a.demangled !== a.name) assert.equal(a.params.map((p) => p.pointer ?? false), b.params.map((p) => p.pointer ?? false), `${files[i]} ${name}: pointers`)
      assert.is(a.demangled, b.demangled)
      // the C++ layouts of by-value structs, read from each compiler's own host DWARF (gcc's for nvcc)
      assert.equal(a.params.map((p) => p.valueType ?? p.valueTypeNote ?? null), b.params.map((p) => p.valueType ?? p.valueTypeNote ?? null), `${files[i]} ${name}: value types`)
    }
  }
})

build('every by-value struct of the corpus gets its C++ layout, the size and alignment of its PTX parameter', () => {
  let described = 0
  for (const compiler of ['nvcc', 'clang'] as const) {
    for (const r of builds[compiler]) {
      for (const k of r.manifest.kernels) {
        for (const p of k.params) {
          if (!(p.type === 'b8' && p.size > 1)) { assert.is(p.valueType, undefined); continue }
          assert.ok(p.valueType, `${compiler} ${r.name} ${k.demangled}: ${p.valueTypeNote ?? 'no value type'}`)
          const v = p.valueType!
          assert.ok(v.kind === 'struct' || v.kind === 'union', `${k.demangled}: ${v.kind}`)
          if (v.kind === 'struct' || v.kind === 'union') assert.equal([v.size, v.align], [p.size, p.align], `${compiler} ${k.demangled} ${v.name}`)
          described++
        }
      }
    }
  }
  // structs.cu: k_mixed, k_arrays, k_nested, k_params, k_mixed_scalars (Mixed, Aligned16, Arrays); templates.cu: vec_sum<float, 4>
  assert.is(described, 2 * 8, `${described} struct parameters described`)
})

build('.offload is what llvm-offload-binary packs from the same images, and llvm-objdump lists them', async () => {
  for (const compiler of ['nvcc', 'clang'] as const) {
    for (const r of builds[compiler]) {
      const args = ['-o', join(work, `${compiler}-${r.name}.ref.offload`)]
      r.images.forEach((img, i) => {
        // Image kind comes from the extension: .cubin → Cubin, .s → PTX (FINDINGS.md §2).
        const f = join(work, `${compiler}-${r.name}.${i}.${img.kind === 'cubin' ? 'cubin' : 's'}`)
        writeFileSync(f, img.bytes)
        const strings = Object.entries(imageStrings(img, r.manifest.producer!)).map(([k, v]) => `${k}=${v}`)
        args.push(`--image=file=${f},${strings.join(',')},kind=cuda`)
      })
      await exec(tool('llvm-offload-binary'), args)
      const ref = readFileSync(args[1]!)
      assert.ok(Buffer.from(r.offload).equals(ref), `${compiler} ${r.name}: .offload differs from llvm-offload-binary's`)
      const ours = join(work, `${compiler}-${r.name}.offload`)
      writeFileSync(ours, r.offload)
      const listing = (await exec(tool('llvm-objdump'), ['--offloading', ours])).stdout
      const images = [...listing.matchAll(/kind\s+(\S+)\narch\s+(\S+)\ntriple\s+(\S+)\nproducer\s+(\S+)/g)].map((m) => [m[1], m[2], m[3], m[4]])
      assert.equal(images, r.images.map((i) => [i.kind, i.arch, 'nvptx64-nvidia-cuda', 'cuda']), `${compiler} ${r.name}`)
    }
  }
})

build('the images llvm-offload-binary extracts are the compiled images, byte for byte', async () => {
  const r = builds.nvcc.find((b) => b.name === 'templates')!
  const file = join(work, 'templates.extract.offload')
  writeFileSync(file, r.offload)
  const out = join(work, 'templates.sm_80.cubin')
  await exec(tool('llvm-offload-binary'), [file, `--image=file=${out},arch=sm_80`])
  assert.ok(Buffer.from(r.images[0]!.bytes).equals(readFileSync(out)))
})

build('rebuilding the corpus hits the cache for every target and gives identical .offload bytes', async () => {
  for (const compiler of ['nvcc', 'clang'] as const) {
    const again = await Promise.all(files.map((f) => buildCudaFile(join(cuDir, f), { arch, compiler: compiler === 'nvcc' ? 'nvcc' : tool('clang++'), cacheDir, session: new BuildSession() })))
    for (let i = 0; i < files.length; i++) {
      // compute_80 and compute_90 PTX, sm_80 and sm_90 assembled from them (issue 27)
      assert.equal(again[i]!.stats, { ...again[i]!.stats, compiles: 0, cacheHits: 4 })
      assert.ok(Buffer.from(again[i]!.offload).equals(Buffer.from(builds[compiler][i]!.offload)), `${compiler} ${files[i]}`)
      assert.equal(again[i]!.manifest, builds[compiler][i]!.manifest)
    }
  }
})

build.run()
