// What clang 22's CUDA headers lack next to nvcc's, as a header kernelpack force-includes in clang builds only
// (`-include`; issue 14). Today: the cache-hint stores of CUDA's sm_32_intrinsics.h (`__stwb`, `__stcg`,
// `__stcs`; clang's __clang_cuda_intrinsics.h defines the loads `__ldcg/__ldca/__ldcs/__ldlu/__ldcv` and
// the store `__stwt`, but no other store), written as clang writes `__stwt`: one `st.global.<op>` per type
// of sm_32_intrinsics.h. A project that defines them itself sets KERNELPACK_NO_CLANG_COMPAT.

const scalars: Array<[string, string, string, string]> = [
  // [C type, PTX type, temporary type, asm constraint]
  ['char', 's8', 'int', 'r'], ['signed char', 's8', 'int', 'r'], ['short', 's16', 'short', 'h'], ['int', 's32', 'int', 'r'],
  ['long long', 's64', 'long long', 'l'], ['unsigned char', 'u8', 'int', 'r'], ['unsigned short', 'u16', 'unsigned short', 'h'],
  ['unsigned int', 'u32', 'unsigned int', 'r'], ['unsigned long long', 'u64', 'unsigned long long', 'l'], ['float', 'f32', 'float', 'f'],
  ['double', 'f64', 'double', 'd'],
]
const vectors: Array<[string, number, string, string, string]> = [
  // [C type, width, PTX element type, temporary type, asm constraint]
  ['char2', 2, 's8', 'int2', 'r'], ['char4', 4, 's8', 'int4', 'r'], ['short2', 2, 's16', 'short2', 'h'], ['short4', 4, 's16', 'short4', 'h'],
  ['int2', 2, 's32', 'int2', 'r'], ['int4', 4, 's32', 'int4', 'r'], ['longlong2', 2, 's64', 'longlong2', 'l'],
  ['uchar2', 2, 'u8', 'uint2', 'r'], ['uchar4', 4, 'u8', 'uint4', 'r'], ['ushort2', 2, 'u16', 'ushort2', 'h'], ['ushort4', 4, 'u16', 'ushort4', 'h'],
  ['uint2', 2, 'u32', 'uint2', 'r'], ['uint4', 4, 'u32', 'uint4', 'r'], ['ulonglong2', 2, 'u64', 'ulonglong2', 'l'],
  ['float2', 2, 'f32', 'float2', 'f'], ['float4', 4, 'f32', 'float4', 'f'], ['double2', 2, 'f64', 'double2', 'd'],
]

function stores(fn: string, op: string): string[] {
  const out = scalars.map(([c, p, tmp, k]) => `__KP_STORE(${fn}, "st.global.${op}.${p}", ${c}, ${tmp}, "${k}")`)
  for (const [c, w, p, tmp, k] of vectors) out.push(`__KP_STORE${w}(${fn}, "st.global.${op}.v${w}.${p}", ${c}, ${tmp}, "${k}")`)
  // long is 64 bits on the 64-bit hosts CUDA supports
  out.push(`__KP_STORE(${fn}, "st.global.${op}.s64", long, long long, "l")`, `__KP_STORE(${fn}, "st.global.${op}.u64", unsigned long, unsigned long long, "l")`)
  return out
}

/** The header's text (deterministic: part of the compile's cache key through its file name). */
export function clangCompatHeader(): string {
  return `// Written by kernelpack for clang CUDA builds (force-included): what clang's CUDA headers lack next to
// nvcc's. Define KERNELPACK_NO_CLANG_COMPAT to leave it out.
#if defined(__clang__) && defined(__CUDA__) && defined(__CUDA_ARCH__) && !defined(KERNELPACK_NO_CLANG_COMPAT) && !defined(__KERNELPACK_CLANG_COMPAT_H)
#define __KERNELPACK_CLANG_COMPAT_H
// __stwb, __stcg, __stcs of sm_32_intrinsics.h (clang defines only __stwt)
#define __KP_STORE(F, OP, T, TMP, K) inline __device__ void F(T *__ptr, T __value) { TMP __tmp = (TMP)__value; asm(OP " [%0], %1;" ::"l"(__ptr), K(__tmp) : "memory"); }
#define __KP_STORE2(F, OP, T, TMP, K) inline __device__ void F(T *__ptr, T __value) { TMP __tmp; __tmp.x = (decltype(__tmp.x))__value.x; __tmp.y = (decltype(__tmp.y))__value.y; asm(OP " [%0], {%1,%2};" ::"l"(__ptr), K(__tmp.x), K(__tmp.y) : "memory"); }
#define __KP_STORE4(F, OP, T, TMP, K) inline __device__ void F(T *__ptr, T __value) { TMP __tmp; __tmp.x = (decltype(__tmp.x))__value.x; __tmp.y = (decltype(__tmp.y))__value.y; __tmp.z = (decltype(__tmp.z))__value.z; __tmp.w = (decltype(__tmp.w))__value.w; asm(OP " [%0], {%1,%2,%3,%4};" ::"l"(__ptr), K(__tmp.x), K(__tmp.y), K(__tmp.z), K(__tmp.w) : "memory"); }
${[...stores('__stwb', 'wb'), ...stores('__stcg', 'cg'), ...stores('__stcs', 'cs')].join('\n')}
#undef __KP_STORE
#undef __KP_STORE2
#undef __KP_STORE4
#endif
`
}
