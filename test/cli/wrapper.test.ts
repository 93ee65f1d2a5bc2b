import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { execFileSync } from 'node:child_process'
import { copyFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { readPtxManifest } from '@kernelpack/toolchain'
import { emitHostRefs, hostRefSymbolsFromManifest } from '@kernelpack/codegen'
import { main, type CliIO } from '../../packages/cli/src/main.js'
import { fixturesDir, tempDir, tool } from '../helpers/tools.js'
import { readSections, readSectionBytes } from '../codegen/elf-compare.js'

// Module: test/fixtures/codegen/offload/a_one_cubin.bin (llvm-offload-binary of nvcc's extern_c.sm_90.cubin)
// and the manifest of the PTX nvcc made from the same source (extern_c.sm_90.ptx); see the fixtures README.
const dir = tempDir('kp-wrapper-cli-')
const cudaRoot = process.env.CUDA_PATH ?? '/usr/local/cuda'
const cudaLib = [join(cudaRoot, 'lib64'), join(cudaRoot, 'targets', 'x86_64-linux', 'lib')].find((d) => existsSync(join(d, 'libcudart_static.a')))
copyFileSync(join(fixturesDir, 'codegen', 'offload', 'a_one_cubin.bin'), join(dir, 'extern_c.offload'))
const manifest = await readPtxManifest(readFileSync(join(fixturesDir, 'codegen', 'offload', 'extern_c.sm_90.ptx'), 'utf8'))
writeFileSync(join(dir, 'extern_c.manifest.json'), JSON.stringify(manifest, null, 2))
const sh = (cmd: string, args: string[], env?: NodeJS.ProcessEnv) => execFileSync(cmd, args, { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: env ?? process.env })

async function cli(args: string[]) {
  const out = { stdout: '', stderr: '', code: 0 }
  const io: CliIO = { stdout: (t) => (out.stdout += t), stderr: (t) => (out.stderr += t), cwd: dir }
  out.code = await main(['wrapper', ...args], io)
  return out
}

// A program that lists the module's kernels and counts the registrations that reach libcudart
// (ld --wrap interposes on the wrapper's calls and forwards them to the real functions).
const program = `#include <stdio.h>
#include "extern_c.wrapper.h"
void **__real___cudaRegisterFatBinary(void *);
void __real___cudaRegisterFunction(void **, const char *, char *, const char *, int, void *, void *, void *, void *, int *);
void __real___cudaRegisterFatBinaryEnd(void **);
static int fatbins, functions, ends;
void **__wrap___cudaRegisterFatBinary(void *w) { fatbins++; return __real___cudaRegisterFatBinary(w); }
void __wrap___cudaRegisterFunction(void **h, const char *host, char *dev, const char *name, int l, void *a, void *b, void *c, void *d, int *e) {
  functions++;
  printf("registered %s at %s\\n", name, host == (const char *)kp_extern_c_saxpy ? "kp_extern_c_saxpy" : "another symbol");
  __real___cudaRegisterFunction(h, host, dev, name, l, a, b, c, d, e);
}
void __wrap___cudaRegisterFatBinaryEnd(void **h) { ends++; __real___cudaRegisterFatBinaryEnd(h); }
int main(void) {
  for (unsigned i = 0; i < kp_extern_c_kernels_count; i++) printf("kernel %s\\n", kp_extern_c_kernels[i].name);
  printf("fatbins=%d functions=%d ends=%d\\n", fatbins, functions, ends);
  return 0;
}
`

// ---
const wrapper = suite('wrapper')

wrapper('cuda: fatbinary from the cubin, links with libcudart (static and shared), registers at start-up without a GPU', async () => {
  const r = await cli(['--flavor', 'cuda', '--offload', 'extern_c.offload', '--manifest', 'extern_c.manifest.json', '-o', 'extern_c.wrapper.c', '--hostrefs'])
  assert.is(r.stderr, '')
  assert.is(r.code, 0)
  sh(tool('gcc'), ['-Wall', '-Wextra', '-Werror', '-O2', '-c', 'extern_c.wrapper.c', '-o', 'w.o'])
  sh(tool('clang'), ['-Wall', '-Werror', '-O2', '-c', 'extern_c.wrapper.c', '-o', 'w.clang.o'])
  // nm: one exported host symbol per kernel, plus the tables.
  const nm = sh('nm', ['w.o'])
  for (const k of ['saxpy', 'fill_u32', 'scale_inplace']) assert.match(nm, new RegExp(`^[0-9a-f]+ B kp_extern_c_${k}$`, 'm'))
  assert.match(nm, /^[0-9a-f]+ [DR] kp_extern_c_kernels$/m)
  // The fatbinary (magic 0xBA55ED50) in .nv_fatbin; the host-reference arrays in the same object.
  const fatbin = readSectionBytes(join(dir, 'w.o'), '.nv_fatbin')
  assert.equal([...fatbin.subarray(0, 4)], [0x50, 0xed, 0x55, 0xba])
  const sections = readSections(join(dir, 'w.o')).map((s) => s.name)
  for (const k of ['KI', 'KE', 'DI', 'DE', 'CI', 'CE']) assert.ok(sections.includes(`.nvHR${k}`), `.nvHR${k}`)
  // .nvHRKE holds the bytes emitHostRefs lists for the same symbols (its `0x..` lines, in order).
  const listed = emitHostRefs(hostRefSymbolsFromManifest(manifest)).split('hostRefKernelArrayExternalLinkage')[1]!.split('};')[0]!
  const bytes = [...listed.matchAll(/0x([0-9a-f]+)/g)].map((m) => parseInt(m[1]!, 16))
  const ke = readSectionBytes(join(dir, 'w.o'), '.nvHRKE')
  assert.equal([...ke], bytes)
  assert.is(Buffer.from(ke).toString('latin1'), 'fill_u32\0saxpy\0scale_inplace\0')
  assert.ok(cudaLib, `libcudart_static.a not found under ${cudaRoot}/lib64 or targets/x86_64-linux/lib; install the CUDA toolkit`)
  writeFileSync(join(dir, 'main.c'), program)
  const wrap = ['__cudaRegisterFatBinary', '__cudaRegisterFunction', '__cudaRegisterFatBinaryEnd'].map((f) => `-Wl,--wrap=${f}`)
  sh(tool('gcc'), ['-Wall', '-Wextra', '-Werror', 'main.c', 'w.o', ...wrap, `-L${cudaLib}`, '-lcudart_static', '-ldl', '-lpthread', '-lrt', '-o', 'prog_static'])
  sh(tool('gcc'), ['-Wall', '-Wextra', '-Werror', 'main.c', 'w.o', ...wrap, `-L${cudaLib}`, '-lcudart', `-Wl,-rpath,${cudaLib}`, '-o', 'prog_shared'])
  for (const prog of ['prog_static', 'prog_shared']) {
    const out = sh(join(dir, prog), [])
    assert.match(out, /^registered saxpy at kp_extern_c_saxpy$/m)
    assert.match(out, /^kernel saxpy\nkernel fill_u32\nkernel scale_inplace\n/m)
    assert.match(out, /^fatbins=1 functions=3 ends=1$/m)
  }
})

wrapper('offload and legacy: C and header written, compile warning-free', async () => {
  for (const flavor of ['offload', 'legacy']) {
    const r = await cli(['--flavor', flavor, '--offload', 'extern_c.offload', '--manifest', 'extern_c.manifest.json', '-o', `${flavor}.c`, '--name', 'ext'])
    assert.is(r.code, 0, r.stderr)
    assert.match(readFileSync(join(dir, `${flavor}.h`), 'utf8'), /extern char kp_ext_saxpy\[1\];/)
    sh(tool('gcc'), ['-Wall', '-Wextra', '-Werror', '-c', `${flavor}.c`, '-o', `${flavor}.o`])
    sh(tool('clang'), ['-Wall', '-Werror', '-c', `${flavor}.c`, '-o', `${flavor}.clang.o`])
  }
  const sections = readSections(join(dir, 'offload.o')).map((s) => s.name)
  assert.ok(sections.includes('llvm_offload_entries') && sections.includes('.llvm.offloading'))
  assert.ok(readSections(join(dir, 'legacy.o')).some((s) => s.name === 'omp_offloading_entries'))
})

wrapper('two modules in one program: each descriptor holds its own images and entries', async () => {
  for (const name of ['first', 'second']) {
    const r = await cli(['--offload', 'extern_c.offload', '--manifest', 'extern_c.manifest.json', '-o', `${name}.c`, '--name', name])
    assert.is(r.code, 0, r.stderr)
  }
  // A stand-in for libomptarget's __tgt_register_lib that prints what each descriptor covers.
  writeFileSync(join(dir, 'tgt.c'), `#include <stdio.h>
struct e { unsigned long long r; unsigned short v, k; unsigned f; void *a; const char *n; unsigned long long s, d; void *x; };
struct i { const unsigned char *b, *end; const struct e *eb, *ee; };
struct d { int n; const struct i *imgs; const struct e *eb, *ee; };
void __tgt_register_lib(const struct d *p) {
  printf("images=%d entries=%d first=%s image0=%ld\\n", p->n, (int)(p->ee - p->eb), p->eb[0].n, (long)(p->imgs[0].end - p->imgs[0].b));
}
void __tgt_unregister_lib(const struct d *p) { (void)p; }
int main(void) { return 0; }
`)
  sh(tool('gcc'), ['-Wall', '-Wextra', '-Werror', 'tgt.c', 'first.c', 'second.c', '-o', 'two'])
  const out = sh(join(dir, 'two'), []).trim().split('\n')
  assert.equal(out, ['images=1 entries=3 first=saxpy image0=7632', 'images=1 entries=3 first=saxpy image0=7632'])
})

wrapper('same inputs give byte-identical output', async () => {
  await cli(['--offload', 'extern_c.offload', '--manifest', 'extern_c.manifest.json', '-o', 'a.c'])
  await cli(['--offload', 'extern_c.offload', '--manifest', 'extern_c.manifest.json', '-o', 'b.c'])
  assert.ok(readFileSync(join(dir, 'a.c')).equals(readFileSync(join(dir, 'b.c'))))
})

wrapper('errors: usage 2; unreadable inputs 1 naming the file and the fix', async () => {
  assert.is((await cli([])).code, 2)
  assert.is((await cli(['--flavor', 'rocm', '--offload', 'x', '--manifest', 'y', '-o', 'z.c'])).code, 2)
  const missing = await cli(['--offload', 'nope.offload', '--manifest', 'extern_c.manifest.json', '-o', 'z.c'])
  assert.is(missing.code, 1)
  assert.match(missing.stderr, /nope\.offload/)
  writeFileSync(join(dir, 'bad.json'), '{')
  const bad = await cli(['--offload', 'extern_c.offload', '--manifest', 'bad.json', '-o', 'z.c'])
  assert.is(bad.code, 1)
  assert.match(bad.stderr, /bad\.json.*not JSON/)
  writeFileSync(join(dir, 'junk.offload'), 'not an offload binary')
  const junk = await cli(['--offload', 'junk.offload', '--manifest', 'extern_c.manifest.json', '-o', 'z.c'])
  assert.is(junk.code, 1)
  assert.match(junk.stderr, /junk\.offload/)
  assert.ok(!existsSync(join(dir, 'z.c')))
})

wrapper.run()
