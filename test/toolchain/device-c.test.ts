// The device front end's C (device-c.ts): what deviceCTypesSource keeps of the file cicc writes beside its
// PTX. The input is written here in the shape cicc 13 writes (line markers, `#if !defined(__CUDABE__)` around
// device declarations, types, prototypes, function definitions whose bodies hold braces in literals and PTX
// `asm`, variables with initialisers); the struct-params tests run the real thing through gcc.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { deviceCDebugInfo, deviceCTypesSource } from '../../packages/toolchain/src/device-c.js'
import { processCounter } from '../../packages/toolchain/src/compile.js'

const t = suite('device front end C: types and kernels')

const GPU = `typedef char __nv_bool;
# 7 "k.cu"
struct Pair;
#include "crt/device_runtime.h"
# 7 "k.cu"
struct Pair {
# 8 "k.cu"
int a;
# 9 "k.cu"
double b;char __nv_no_debug_dummy_end_padding_0[0];};
enum Mode {
M0,
M1 = 4};
typedef struct Pair PairAlias;
typedef void (*Fn)(int);
struct Wrap { struct Pair __b_4Pair;
float f;} __attribute__((__aligned__(16)));
#if !defined(__CUDABE__)
 ___device__(extern  __no_sc__) int printf(const char *__restrict__, ...);
#endif
__global__ __var_used__ extern void _Z1k4Pair(struct Pair, int *);
___device__(static  __no_sc__) __inline__ int _Z3getv(void){
{
 const char *s = "}{"; char c = '{';
__asm__ volatile("mov.u32 %0, %%laneid;" : "=r"(c));
return c; }}
static int table[3] = {1, 2, 3};
__asm__(".align 2");
__global__ __var_used__ void _Z1k4Pair(
struct Pair __val_param(p), 
int *out){__copy_param(struct Pair p,__val_param(p));
{
if (p.a) { out[0] = (int)p.b; }
}}
__global__ __var_used__ __launch_bounds__(256, 1) void plain(int n){
{ (void)n; }}
`

t('keeps types and each kernel\'s head with an empty body, drops preprocessor lines, device functions, variables and asm', () => {
  const out = deviceCTypesSource(GPU)
  const body = out.slice(out.indexOf('#define __no_sc__\n') + '#define __no_sc__\n'.length)
  assert.is(body, [
    'typedef char __nv_bool;',
    'struct Pair;',
    'struct Pair {\n\nint a;\n\ndouble b;char __nv_no_debug_dummy_end_padding_0[0];};',
    'enum Mode {\nM0,\nM1 = 4};',
    'typedef struct Pair PairAlias;',
    'typedef void (*Fn)(int);',
    'struct Wrap { struct Pair __b_4Pair;\nfloat f;} __attribute__((__aligned__(16)));',
    '__global__ __var_used__ void _Z1k4Pair(\nstruct Pair __val_param(p), \nint *out) {}',
    '__global__ __var_used__ __launch_bounds__(256, 1) void plain(int n) {}',
    '',
  ].join('\n'))
  // the prelude: the toolkit's C declarations of the built-in types, the front end's macros defined away
  assert.ok(out.startsWith('#include <stddef.h>\n#include "builtin_types.h"\n'))
  assert.match(out, /#define __val_param\(x\) x\n/)
})

t('a kernel prototype alone is dropped (its definition follows in the file); a file with no kernels keeps its types', () => {
  const out = deviceCTypesSource('struct S { int x; };\n__global__ __var_used__ extern void k(struct S);\n')
  assert.ok(out.endsWith('struct S { int x; };\n'), out)
})

t('the C compile runs once for the same types and kernel heads: an edited device function or kernel body reuses it, a changed struct does not', async () => {
  const work = mkdtempSync(join(tmpdir(), 'kp-device-c-'))
  const include = '/usr/local/cuda/include'
  const before = processCounter.spawned
  const dump = await deviceCDebugInfo(GPU, include, work)
  assert.match(dump, /DW_AT_name\s*:\s*(\(indirect string[^)]*\):\s*)?Pair/, 'the struct is described')
  assert.match(dump, /_Z1k4Pair/, 'the kernel is described')
  assert.is(processCounter.spawned - before, 2, 'one gcc and one readelf')
  // a device function's body and the kernel's body are not part of the C compile
  const edited = GPU.replace('return c; }}', 'return c + 1; }}').replace('int *out){', 'int *out){ int edited = 1;')
  assert.is.not(edited, GPU)
  assert.is(await deviceCDebugInfo(edited, include, work), dump)
  assert.is(processCounter.spawned - before, 2, 'no second gcc for the same types')
  const changed = GPU.replace('double b;', 'float b;')
  assert.is.not(await deviceCDebugInfo(changed, include, work), dump)
  assert.is(processCounter.spawned - before, 4, 'a changed struct compiles again')
})

t.run()
