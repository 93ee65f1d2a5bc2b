// Wrapper C: a C file that embeds device images and registers them at program start, so a native program
// (a Node addon, any C/C++ binary) built without nvcc or clang's offload driver carries its kernels.
// Three layouts (reference/FINDINGS.md §4):
//  - offload: LLVM 22's llvm-offload-wrapper / clang-linker-wrapper (llvm/lib/Frontend/Offloading/
//    OffloadWrapper.cpp): 56-byte `__tgt_offload_entry` records in `llvm_offload_entries`, one
//    `.omp_offloading.device_image[.N]` per offload binary in `.llvm.offloading`, `__tgt_device_image`,
//    `__tgt_bin_desc`, `__tgt_register_lib` in a priority-101 constructor, `__tgt_unregister_lib` at exit.
//  - legacy: the clang-offload-wrapper document (clang/docs/ClangOffloadWrapper.rst, LLVM <= 16): 32-byte
//    entries in `omp_offloading_entries`, raw device images, `.offload_arch_list` strings and
//    `__tgt_image_info` records registered with `__tgt_register_image_info` before `__tgt_register_lib`.
//  - cuda: CUDA runtime registration as clang-linker-wrapper emits it for `--kind=cuda`: the fatbinary in
//    `.nv_fatbin`, the {0x466243B1, 1, fatbin, 0} wrapper in `.nvFatBinSegment`, `__cudaRegisterFatBinary`,
//    `__cudaRegisterFunction` / `__cudaRegisterVar` per entity, `__cudaRegisterFatBinaryEnd`, and
//    `__cudaUnregisterFatBinary` at exit.
// Every name that came from a user file is written as hex bytes; comments go through cComment.
import { readOffloadBinaries, type KernelManifest, type OffloadBinary } from '@kernelpack/offload'
import { emitHostRefs, isCompilerInternalSymbol, type HostRefSymbol } from './host-refs.js'
import { cComment } from './serialize.js'

export type WrapperFlavor = 'offload' | 'legacy' | 'cuda'

export interface WrapperInput {
  /** Module base name (`vecadd`); C identifiers are built from it after sanitising. */
  name: string
  /** The `.offload` file: one or more concatenated offload binaries. */
  offload: Uint8Array
  manifest: KernelManifest
  /** The fatbinary for the `cuda` flavour (`fatbinary --create` or `nvcc -fatbin` output). */
  fatbin?: Uint8Array
  /** Host-reference arrays to put in the same object (`.nvHR*` sections, cudafe++ bytes). */
  hostRefs?: { symbols: HostRefSymbol[]; moduleId?: string }
}

export interface EmitWrapperOptions {
  /** Registration layout. @default 'offload' */
  flavor?: WrapperFlavor
  /** `Kind` of the offload entries (1 OpenMP, 2 CUDA, 4 HIP). @default the offload kind of the first image, else 2 */
  entryKind?: number
}

export interface WrapperOutput {
  /** The wrapper C source. */
  c: string
  /** A header declaring the exported host symbols and the kernel/variable tables. */
  h?: string
}

/** Bad wrapper input (no images, missing fatbin, clashing names); the message says what to pass. */
export class WrapperError extends Error {
  override name = 'WrapperError'
  readonly userError = true
}

/** Layout constants (FINDINGS.md §4, OffloadWrapper.cpp, ClangOffloadWrapper.rst). */
export const wrapperLayout = {
  /** `sizeof(__tgt_offload_entry)` in LLVM 22: {u64 reserved, u16 version, u16 kind, u32 flags, ptr addr,
   * ptr name, u64 size, u64 data, ptr aux}. */
  entrySize: 56,
  entryVersion: 1,
  /** Old layout {ptr addr, ptr name, size_t size, i32 flags, i32 reserved}. */
  legacyEntrySize: 32,
  fatbinMagic: 0x466243b1,
  fatbinVersion: 1,
  /** ELF section type SHT_LLVM_OFFLOADING, which clang gives `.llvm.offloading`. */
  shtLlvmOffloading: 0x6fff4c0b,
  /** CUDA entry flags: bits 0-2 kind (0 global, 1 managed), bit 3 extern, bit 4 constant. */
  flagExtern: 0x8,
  flagConstant: 0x10,
  /** Constructor priority LLVM uses for every wrapper kind. */
  ctorPriority: 101,
} as const

/** A C identifier from any string: `[A-Za-z0-9_]` kept, every other byte as `_xHH`. */
export function sanitizeIdentifier(name: string): string {
  let out = ''
  for (const byte of new TextEncoder().encode(name)) {
    const ch = String.fromCharCode(byte)
    out += /[A-Za-z0-9_]/.test(ch) ? ch : `_x${byte.toString(16).padStart(2, '0')}`
  }
  if (out === '' || /^[0-9]/.test(out)) out = '_' + out
  return out
}

/** The exported host symbol of a kernel or variable: `kp_<module>_<ptx name>` after sanitising. */
export function hostSymbolName(moduleName: string, ptxName: string): string {
  return `kp_${sanitizeIdentifier(moduleName)}_${sanitizeIdentifier(ptxName)}`
}

/** `0x5f,0x5a,…` in lines of `perLine` bytes, each line indented; a NUL is appended when asked. */
export function hexLines(bytes: Uint8Array, options: { nul?: boolean; perLine?: number; indent?: string } = {}): string {
  const perLine = options.perLine ?? 16
  const indent = options.indent ?? '  '
  const all = options.nul ? [...bytes, 0] : bytes
  const lines: string[] = []
  for (let i = 0; i < all.length; i += perLine) {
    const row: string[] = []
    for (let j = i; j < Math.min(all.length, i + perLine); j++) row.push(`0x${all[j]!.toString(16).padStart(2, '0')}`)
    lines.push(indent + row.join(', ') + ',')
  }
  return lines.join('\n')
}

const octal = Array.from({ length: 256 }, (_, b) => '\\' + b.toString(8).padStart(3, '0'))

/** Image bytes as C string-literal lines, every byte a 3-digit octal escape (`"\177\105…"`): nothing
 * in the data can end the literal, and compilers read a literal ~30x faster than a brace list of the
 * same bytes (4 MiB: gcc 1.2 s against 39 s). The array is declared with exactly the image's length, so
 * C drops the literal's NUL (declared KP_NONSTRING). */
export function octalLines(bytes: Uint8Array, perLine = 32, indent = '  '): string {
  const lines: string[] = []
  for (let i = 0; i < bytes.length; i += perLine) {
    let line = indent + '"'
    const end = Math.min(bytes.length, i + perLine)
    for (let j = i; j < end; j++) line += octal[bytes[j]!]
    lines.push(line + '"')
  }
  return lines.length ? lines.join('\n') : indent + '""'
}

/** `nonstring` (GCC >= 8, clang >= 21) marks the image arrays as bytes, not strings, so -Wextra's
 * -Wunterminated-string-initialization stays quiet about the dropped NUL. */
const nonstringMacro = [
  '#if defined(__has_attribute)',
  '#if __has_attribute(nonstring)',
  '#define KP_NONSTRING __attribute__((nonstring))',
  '#endif',
  '#endif',
  '#ifndef KP_NONSTRING',
  '#define KP_NONSTRING',
  '#endif',
].join('\n')

interface WrapperSymbol {
  kind: 'kernel' | 'variable'
  name: string
  host: string
  size: number
  align: number
  flags: number
  constant: boolean
  extern: boolean
}

/** A manifest alignment usable in `aligned(N)`: a power of two from 1 to 4096, else 1. */
function powerOfTwoAlign(align: number | undefined): number {
  return align !== undefined && Number.isInteger(align) && align >= 1 && align <= 4096 && (align & (align - 1)) === 0 ? align : 1
}

function collectSymbols(input: WrapperInput): WrapperSymbol[] {
  // A manifest is user input (JSON on disk): check what goes into the C before using it.
  for (const k of input.manifest.kernels) {
    if (typeof k.name !== 'string' || k.name === '') throw new WrapperError(`module ${JSON.stringify(input.name)}: a kernel in the manifest has no name; regenerate the manifest`)
  }
  for (const v of input.manifest.variables) {
    if (typeof v.name !== 'string' || v.name === '') throw new WrapperError(`module ${JSON.stringify(input.name)}: a variable in the manifest has no name; regenerate the manifest`)
    if (!Number.isSafeInteger(v.size) || v.size < 0) throw new WrapperError(`module ${JSON.stringify(input.name)}: variable ${JSON.stringify(v.name)} has size ${JSON.stringify(v.size)} in the manifest; sizes are byte counts (regenerate the manifest)`)
  }
  const out: WrapperSymbol[] = []
  const names = new Set<string>()
  // Declarations of entities defined elsewhere (`.extern`) have no code in this module's images; a PTX
  // prototype followed by its definition names one entity once.
  const keep = (name: string, linkage: string) => linkage !== 'extern' && !isCompilerInternalSymbol(name) && !names.has(name) && names.add(name)
  for (const k of input.manifest.kernels) {
    if (!keep(k.name, k.linkage)) continue
    out.push({ kind: 'kernel', name: k.name, host: hostSymbolName(input.name, k.name), size: 0, align: 1, flags: 0, constant: false, extern: false })
  }
  for (const v of input.manifest.variables) {
    if (!keep(v.name, v.linkage)) continue
    const constant = v.space === 'const'
    out.push({
      kind: 'variable', name: v.name, host: hostSymbolName(input.name, v.name), size: v.size, align: powerOfTwoAlign(v.align),
      flags: constant ? wrapperLayout.flagConstant : 0, constant, extern: false,
    })
  }
  const seen = new Map<string, string>()
  for (const s of out) {
    const other = seen.get(s.host)
    if (other !== undefined) {
      throw new WrapperError(`${JSON.stringify(other)} and ${JSON.stringify(s.name)} in module ${JSON.stringify(input.name)} both map to the C name ${s.host}; rename one of them`)
    }
    seen.set(s.host, s.name)
  }
  return out
}

function header(input: WrapperInput, flavor: WrapperFlavor, what: string): string {
  return [
    `/* Generated by kernelpack (wrapper flavour: ${flavor}) for module ${cComment(JSON.stringify(input.name))}.`,
    ` * ${what}`,
    ' * Do not edit: regenerate with `kernelpack wrapper`. */',
  ].join('\n')
}

/** Name strings as hex-byte arrays (`static const char kp_name_N[]`), never as C string literals. */
function nameArrays(id: string, symbols: WrapperSymbol[]): string {
  return symbols
    .map((s, i) => `/* ${cComment(s.name)} */\nstatic const char kp_${id}_name_${i}[] = {\n${hexLines(new TextEncoder().encode(s.name), { nul: true })}\n};`)
    .join('\n')
}

/** Exported host symbols: a byte per kernel (its address is the key cudaLaunchKernel takes), the host
 * shadow (size bytes) per variable. Writable and zeroed, so no linker folds two of them together. */
function hostDefinitions(symbols: WrapperSymbol[]): string {
  return symbols
    .map((s) => s.kind === 'kernel'
      ? `/* kernel ${cComment(s.name)} */\nchar ${s.host}[1] = { 0 };`
      : `/* ${s.constant ? '__constant__' : '__device__'} ${cComment(s.name)}: host shadow of ${s.size} bytes */\nunsigned char ${s.host}[${Math.max(1, s.size)}] __attribute__((aligned(${s.align}))) = { 0 };`)
    .join('\n')
}

const symbolStruct = [
  '#ifndef KP_SYMBOL_DEFINED',
  '#define KP_SYMBOL_DEFINED',
  '/* One kernel or variable of a kernelpack module: PTX name, exported host symbol, size (0 for kernels). */',
  'struct kp_symbol {',
  '  const char *name;',
  '  const void *host;',
  '  unsigned long long size;',
  '  int is_variable;',
  '  int is_constant;',
  '};',
  '#endif',
].join('\n')

function symbolTables(id: string, symbols: WrapperSymbol[]): string {
  const kernels = symbols.map((s, i) => [s, i] as const).filter(([s]) => s.kind === 'kernel')
  const vars = symbols.map((s, i) => [s, i] as const).filter(([s]) => s.kind === 'variable')
  const row = ([s, i]: readonly [WrapperSymbol, number]) => `  { kp_${id}_name_${i}, ${s.host}, ${s.size}ull, ${s.kind === 'variable' ? 1 : 0}, ${s.constant ? 1 : 0} },`
  const table = (name: string, rows: ReadonlyArray<readonly [WrapperSymbol, number]>) =>
    `const struct kp_symbol kp_${id}_${name}[${rows.length + 1}] = {\n${rows.map(row).join('\n')}${rows.length ? '\n' : ''}  { 0, 0, 0ull, 0, 0 },\n};\nconst unsigned kp_${id}_${name}_count = ${rows.length};`
  return [symbolStruct, '/* Tables for programs that list their kernels (terminated by a zero row). */', table('kernels', kernels), table('variables', vars)].join('\n')
}

/** The header: the exported host symbols and tables, usable from C and C++. */
function emitHeader(input: WrapperInput, flavor: WrapperFlavor, symbols: WrapperSymbol[]): string {
  const id = sanitizeIdentifier(input.name)
  const guard = `KP_${id.toUpperCase()}_WRAPPER_H`
  const decls = symbols.map((s) => s.kind === 'kernel'
    ? `/* kernel ${cComment(s.name)}: pass (const void *)${s.host} to cudaLaunchKernel */\nextern char ${s.host}[1];`
    : `/* ${s.constant ? '__constant__' : '__device__'} ${cComment(s.name)}: pass ${s.host} to cudaMemcpyToSymbol */\nextern unsigned char ${s.host}[${Math.max(1, s.size)}];`)
  return [
    header(input, flavor, 'Declarations of the host symbols the wrapper C exports.'),
    `#ifndef ${guard}`,
    `#define ${guard}`,
    '#ifdef __cplusplus',
    'extern "C" {',
    '#endif',
    symbolStruct,
    ...decls,
    `extern const struct kp_symbol kp_${id}_kernels[];`,
    `extern const unsigned kp_${id}_kernels_count;`,
    `extern const struct kp_symbol kp_${id}_variables[];`,
    `extern const unsigned kp_${id}_variables_count;`,
    '#ifdef __cplusplus',
    '}',
    '#endif',
    `#endif /* ${guard} */`,
    '',
  ].join('\n')
}

function readBinaries(input: WrapperInput): OffloadBinary[] {
  let binaries: OffloadBinary[]
  try {
    binaries = readOffloadBinaries(input.offload)
  } catch (err) {
    throw new WrapperError(`module ${JSON.stringify(input.name)}: the offload input is not an offload binary: ${(err as Error).message}; pass the .offload file that kernelpack build or llvm-offload-binary wrote`)
  }
  if (binaries.length === 0) throw new WrapperError(`module ${JSON.stringify(input.name)}: the offload input holds no binaries; build the module first`)
  return binaries
}

/** Where the inner image of a version-1 binary lies, relative to the binary's first byte. */
function innerImageRange(input: WrapperInput, b: OffloadBinary): [number, number] {
  if (b.version !== 1 || b.entries.length !== 1) {
    throw new WrapperError(`module ${JSON.stringify(input.name)}: the binary at byte ${b.offset} is version ${b.version} with ${b.entries.length} images; LLVM 22's runtime reads version-1 binaries of one image each (re-pack with kernelpack pack)`)
  }
  const img = b.entries[0]!.image
  const start = img.byteOffset - input.offload.byteOffset - b.offset
  return [start, start + img.byteLength]
}

// __tgt_device_image and __tgt_bin_desc have the same four fields in both layouts (FINDINGS §4: only the
// entry record changed between clang-offload-wrapper and LLVM 22).
const descriptorStructs = [
  'struct __tgt_device_image {',
  '  const void *ImageStart;',
  '  const void *ImageEnd;',
  '  const struct __tgt_offload_entry *EntriesBegin;',
  '  const struct __tgt_offload_entry *EntriesEnd;',
  '};',
  'struct __tgt_bin_desc {',
  '  int NumDeviceImages;',
  '  const struct __tgt_device_image *DeviceImages;',
  '  const struct __tgt_offload_entry *HostEntriesBegin;',
  '  const struct __tgt_offload_entry *HostEntriesEnd;',
  '};',
]

const offloadStructs = [
  '/* llvm/Frontend/Offloading/Utility.h (LLVM 22): 56 bytes. */',
  'struct __tgt_offload_entry {',
  '  unsigned long long Reserved;',
  '  unsigned short Version;',
  '  unsigned short Kind;',
  '  unsigned int Flags;',
  '  void *Address;',
  '  const char *SymbolName;',
  '  unsigned long long Size;',
  '  unsigned long long Data;',
  '  void *AuxAddr;',
  '};',
  ...descriptorStructs,
].join('\n')

/** Section-spec macros. GCC pastes a section name verbatim into `.section`, so the flags and the ELF type
 * that clang derives from the name (SHT_LLVM_OFFLOADING for `.llvm.offloading`) are appended for it and
 * the rest of GCC's line is commented out with `#`. */
function sectionMacros(): string {
  return [
    '#if defined(__clang__)',
    '#define KP_SECTION_LLVM_OFFLOADING ".llvm.offloading"',
    '#else',
    `#define KP_SECTION_LLVM_OFFLOADING ".llvm.offloading,\\"a\\",@0x${wrapperLayout.shtLlvmOffloading.toString(16)} #"`,
    '#endif',
  ].join('\n')
}

/** Entry names in `.llvm.rodata.offloading` as clang emits them: mergeable NUL-terminated strings
 * (flags "aMS", entsize 1), local symbols `.offloading.entry_name[.N]`. C cannot ask for a mergeable
 * section, so the bytes go through top-level asm, as `.byte` lists (no name can break out of them). */
function offloadEntryNames(id: string, symbols: WrapperSymbol[]): string {
  if (symbols.length === 0) return ''
  const asm: string[] = ['  ".pushsection .llvm.rodata.offloading,\\"aMS\\",@progbits,1\\n"']
  const decls: string[] = []
  symbols.forEach((s, i) => {
    const label = i === 0 ? '.offloading.entry_name' : `.offloading.entry_name.${i}`
    const bytes = [...new TextEncoder().encode(s.name), 0]
    asm.push(`  /* ${cComment(s.name)} */`)
    asm.push(`  ".type ${label},@object\\n${label}:\\n"`)
    for (let j = 0; j < bytes.length; j += 16) asm.push(`  "\\t.byte ${bytes.slice(j, j + 16).map((b) => `0x${b.toString(16).padStart(2, '0')}`).join(',')}\\n"`)
    asm.push(`  ".size ${label}, ${bytes.length}\\n"`)
    decls.push(`extern const char kp_${id}_entry_name_${i}[] __asm__("${label}");`)
  })
  asm.push('  ".popsection\\n"')
  return `__asm__(\n${asm.join('\n')}\n);\n${decls.join('\n')}`
}

function emitOffload(input: WrapperInput, options: EmitWrapperOptions, legacy: boolean): WrapperOutput {
  const id = sanitizeIdentifier(input.name)
  const binaries = readBinaries(input)
  const symbols = collectSymbols(input)
  const kind = options.entryKind ?? binaries[0]!.entries[0]?.offloadKind ?? 2
  const section = legacy ? 'omp_offloading_entries' : 'llvm_offload_entries'
  const parts: string[] = [
    header(input, legacy ? 'legacy' : 'offload', legacy
      ? 'Layout of clang-offload-wrapper (clang/docs/ClangOffloadWrapper.rst): 32-byte entries in omp_offloading_entries, raw device images, .offload_arch_list, __tgt_image_info.'
      : 'Layout of LLVM 22 llvm-offload-wrapper (OffloadWrapper.cpp): 56-byte entries in llvm_offload_entries, offload binaries in .llvm.offloading, __tgt_register_lib.'),
    '#include <stdlib.h>',
    '',
    legacy
      ? [
          '/* clang/docs/ClangOffloadWrapper.rst: 32 bytes. */',
          'struct __tgt_offload_entry {',
          '  void *addr;',
          '  const char *name;',
          '  unsigned long size;',
          '  int flags;',
          '  int reserved;',
          '};',
          ...descriptorStructs,
          'struct __tgt_image_info {',
          '  int version;',
          '  int image_number;',
          '  int number_images;',
          '  const char *offload_arch;',
          '  const char *compile_opts;',
          '};',
          'void __tgt_register_image_info(const struct __tgt_image_info *);',
        ].join('\n')
      : offloadStructs,
    'void __tgt_register_lib(const struct __tgt_bin_desc *);',
    'void __tgt_unregister_lib(const struct __tgt_bin_desc *);',
    '',
  ]
  if (!legacy) parts.push(sectionMacros(), '')
  parts.push(nonstringMacro, '')

  parts.push(hostDefinitions(symbols), '', nameArrays(id, symbols), '', symbolTables(id, symbols), '')

  // Entries. An object without entries gets LLVM's zero-length dummy, so the section exists as in
  // LLVM's output and the range is empty (never both: the dummy has no relocations and the entries do,
  // which GCC reports as a section flags conflict).
  // The descriptor and images point at this module's own records, not at the linker's
  // __start_/__stop_ of the whole section as LLVM's one-wrapper-per-link does: several kernelpack modules
  // linked into one program (an addon with two .cu files) then register each entity once, with its image.
  const table = symbols.length === 0 ? `kp_${id}_dummy_entry` : `kp_${id}_entries`
  const [begin, end] = [table, `${table} + ${symbols.length}`]
  if (symbols.length === 0) {
    const dummy = legacy ? '__dummy.omp_offloading.entry' : '__dummy.llvm_offload_entries'
    parts.push(`static const struct __tgt_offload_entry kp_${id}_dummy_entry[0] __asm__("${dummy}") __attribute__((section("${section}"), aligned(8), used));`, '')
  } else {
    if (!legacy) parts.push(offloadEntryNames(id, symbols), '')
    const rows = symbols.map((s, i) => legacy
      ? `  { ${s.host}, kp_${id}_name_${i}, ${s.size}ul, ${s.flags}, 0 },`
      : `  { 0ull, ${wrapperLayout.entryVersion}, ${kind}, ${s.flags}u, ${s.host}, kp_${id}_entry_name_${i}, ${s.size}ull, 0ull, 0 },`)
    parts.push(
      `/* One record per kernel (Size 0, Address = its host symbol) and per variable (Address = host shadow). */`,
      `static const struct __tgt_offload_entry kp_${id}_entries[${symbols.length}] __attribute__((section("${section}"), aligned(8), used)) = {`,
      ...rows,
      '};',
      '',
    )
  }

  // Images. LLVM 22 embeds each offload binary whole and points ImageStart/ImageEnd at its inner image;
  // the legacy wrapper embedded the device image itself.
  const images: string[] = []
  const descs: string[] = []
  const infos: string[] = []
  binaries.forEach((b, n) => {
    const suffix = n === 0 ? '' : `.${n}`
    const cname = `kp_${id}_image_${n}`
    const entry = b.entries[0]
    const arch = entry?.strings.get('arch') ?? ''
    const triple = entry?.strings.get('triple') ?? ''
    const note = `/* image ${n}: ${cComment(`${triple} ${arch}`)}, ${entry ? entry.image.byteLength : 0} bytes */`
    if (legacy) {
      if (!entry || b.entries.length !== 1) throw new WrapperError(`module ${JSON.stringify(input.name)}: the binary at byte ${b.offset} must hold exactly one image`)
      const bytes = entry.image
      images.push(note, bytes.byteLength
        ? `static const unsigned char ${cname}[${bytes.byteLength}] __asm__(".omp_offloading.device_image${suffix}") KP_NONSTRING =\n${octalLines(bytes)};`
        : `static const unsigned char ${cname}[1] __asm__(".omp_offloading.device_image${suffix}") = { 0 };`)
      descs.push(`  { ${cname}, ${cname} + ${bytes.byteLength}, ${begin}, ${end} },`)
      images.push(`static const char kp_${id}_arch_${n}[] __asm__("__offload_arch${suffix}") __attribute__((section(".offload_arch_list"), used)) = {\n${hexLines(new TextEncoder().encode(arch), { nul: true })}\n};`)
      infos.push(`static const struct __tgt_image_info kp_${id}_image_info_${n} __asm__(".offload_image_info${suffix}") = { 1, ${n}, ${binaries.length}, kp_${id}_arch_${n}, 0 };`)
    } else {
      const [start, stop] = innerImageRange(input, b)
      const bytes = input.offload.subarray(b.offset, b.offset + b.size)
      images.push(note, `static const unsigned char ${cname}[${bytes.byteLength}] __asm__(".omp_offloading.device_image${suffix}") KP_NONSTRING __attribute__((section(KP_SECTION_LLVM_OFFLOADING), aligned(8))) =\n${octalLines(bytes)};`)
      descs.push(`  { ${cname} + ${start}, ${cname} + ${stop}, ${begin}, ${end} },`)
    }
  })
  parts.push(...images, '')
  if (infos.length) parts.push(...infos, '')
  parts.push(
    `static const struct __tgt_device_image kp_${id}_device_images[${binaries.length}] __asm__(".omp_offloading.device_images") = {`,
    ...descs,
    '};',
    `static const struct __tgt_bin_desc kp_${id}_descriptor __asm__(".omp_offloading.descriptor") = { ${binaries.length}, kp_${id}_device_images, ${begin}, ${end} };`,
    '',
    `static void kp_${id}_unregister(void) __asm__(".omp_offloading.descriptor_unreg");`,
    `__attribute__((section(".text.startup"))) static void kp_${id}_unregister(void) {`,
    `  __tgt_unregister_lib(&kp_${id}_descriptor);`,
    '}',
    '',
    `static void kp_${id}_register(void) __asm__(".omp_offloading.descriptor_reg");`,
    `__attribute__((constructor(${wrapperLayout.ctorPriority}), section(".text.startup"))) static void kp_${id}_register(void) {`,
    ...infos.map((_, n) => `  __tgt_register_image_info(&kp_${id}_image_info_${n});`),
    `  __tgt_register_lib(&kp_${id}_descriptor);`,
    `  atexit(kp_${id}_unregister);`,
    '}',
  )
  if (input.hostRefs) parts.push('', '/* cudafe++-style host-reference arrays (.nvHR* sections). */', emitHostRefs(input.hostRefs.symbols, { moduleId: input.hostRefs.moduleId, dialect: 'c' }).trimEnd())
  return { c: parts.join('\n') + '\n', h: emitHeader(input, legacy ? 'legacy' : 'offload', symbols) }
}

function emitCuda(input: WrapperInput): WrapperOutput {
  const id = sanitizeIdentifier(input.name)
  if (!input.fatbin || input.fatbin.byteLength === 0) {
    throw new WrapperError(`module ${JSON.stringify(input.name)}: the cuda flavour needs a fatbinary; kernelpack wrapper builds one with the CUDA toolkit's fatbinary, or pass --fatbin FILE (nvcc -fatbin output)`)
  }
  const symbols = collectSymbols(input)
  const fatbin = input.fatbin
  const calls = symbols.map((s, i) => s.kind === 'kernel'
    ? `  __cudaRegisterFunction(handle, (const char *)${s.host}, (char *)kp_${id}_name_${i}, kp_${id}_name_${i}, -1, 0, 0, 0, 0, 0);`
    : `  __cudaRegisterVar(handle, (char *)${s.host}, (char *)kp_${id}_name_${i}, kp_${id}_name_${i}, ${s.extern ? 1 : 0}, ${s.size}ul, ${s.constant ? 1 : 0}, 0);`)
  const parts: string[] = [
    header(input, 'cuda', 'CUDA runtime registration as clang-linker-wrapper emits it (OffloadWrapper.cpp, --kind=cuda): .nv_fatbin, .nvFatBinSegment, __cudaRegister*.'),
    '#include <stdlib.h>',
    '',
    '/* libcudart entry points (crt/host_runtime.h); the handle is an opaque void **. */',
    'void **__cudaRegisterFatBinary(void *fatCubin);',
    'void __cudaRegisterFatBinaryEnd(void **fatCubinHandle);',
    'void __cudaUnregisterFatBinary(void **fatCubinHandle);',
    'void __cudaRegisterFunction(void **fatCubinHandle, const char *hostFun, char *deviceFun, const char *deviceName, int thread_limit, void *tid, void *bid, void *bDim, void *gDim, int *wSize);',
    'void __cudaRegisterVar(void **fatCubinHandle, char *hostVar, char *deviceAddress, const char *deviceName, int ext, unsigned long size, int constant, int global);',
    '',
    '/* {magic, version, fatbin, unused}: the layout __cudaRegisterFatBinary reads (nvcc\'s __fatBinC_Wrapper_t). */',
    'struct kp_fatbin_wrapper {',
    '  int magic;',
    '  int version;',
    '  const void *data;',
    '  void *filename_or_fatbins;',
    '};',
    '',
    hostDefinitions(symbols),
    '',
    nameArrays(id, symbols),
    '',
    symbolTables(id, symbols),
    '',
    `/* The fatbinary (${fatbin.byteLength} bytes). */`,
    nonstringMacro,
    `static const unsigned char kp_${id}_fatbin[${fatbin.byteLength}] __asm__(".fatbin_image") KP_NONSTRING __attribute__((section(".nv_fatbin"), aligned(16))) =\n${octalLines(fatbin)};`,
    `static const struct kp_fatbin_wrapper kp_${id}_fatbin_wrapper __asm__(".fatbin_wrapper") __attribute__((section(".nvFatBinSegment"), aligned(8))) = { ${wrapperLayout.fatbinMagic}, ${wrapperLayout.fatbinVersion}, kp_${id}_fatbin, 0 };`,
    `static void **kp_${id}_handle __asm__(".cuda.binary_handle");`,
    '',
    `static void kp_${id}_unregister(void) __asm__(".cuda.fatbin_unreg");`,
    `__attribute__((section(".text.startup"))) static void kp_${id}_unregister(void) {`,
    `  __cudaUnregisterFatBinary(kp_${id}_handle);`,
    '}',
    '',
    '/* One call per entity, from this module\'s own table: a walk over __start_llvm_offload_entries would',
    ' * also register the entities of every other module linked into the same program with this handle. */',
    `static void kp_${id}_register_globals(void **handle) __asm__(".cuda.globals_reg");`,
    `__attribute__((section(".text.startup"))) static void kp_${id}_register_globals(void **handle) {`,
    ...(calls.length ? calls : ['  (void)handle;']),
    '}',
    '',
    `static void kp_${id}_register(void) __asm__(".cuda.fatbin_reg");`,
    `__attribute__((constructor(${wrapperLayout.ctorPriority}), section(".text.startup"))) static void kp_${id}_register(void) {`,
    `  void **handle = __cudaRegisterFatBinary((void *)&kp_${id}_fatbin_wrapper);`,
    `  kp_${id}_handle = handle;`,
    `  kp_${id}_register_globals(handle);`,
    '  __cudaRegisterFatBinaryEnd(handle);',
    `  atexit(kp_${id}_unregister);`,
    '}',
  ]
  if (input.hostRefs) parts.push('', '/* cudafe++-style host-reference arrays (.nvHR* sections). */', emitHostRefs(input.hostRefs.symbols, { moduleId: input.hostRefs.moduleId, dialect: 'c' }).trimEnd())
  return { c: parts.join('\n') + '\n', h: emitHeader(input, 'cuda', symbols) }
}

/** Wrapper C (and a header) that embeds a module's device images and registers them at start-up. */
export function emitWrapperC(input: WrapperInput, options: EmitWrapperOptions = {}): WrapperOutput {
  const flavor = options.flavor ?? 'offload'
  if (flavor === 'cuda') return emitCuda(input)
  if (flavor === 'offload' || flavor === 'legacy') return emitOffload(input, options, flavor === 'legacy')
  throw new WrapperError(`unknown wrapper flavour ${JSON.stringify(flavor)}; use offload, legacy or cuda`)
}
