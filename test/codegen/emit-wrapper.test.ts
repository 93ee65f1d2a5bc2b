import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { execFileSync } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { writeOffloadBinary, type KernelManifest } from '@kernelpack/offload'
import { readPtxManifest } from '@kernelpack/toolchain'
import { emitWrapperC, sanitizeIdentifier, hostSymbolName, wrapperLayout } from '../../packages/codegen/src/emit-wrapper.js'
import { tool, tempDir, fixturesDir, clangCurandShim } from '../helpers/tools.js'
import { readSections, readSymbols, readSectionBytes, type Section } from './elf-compare.js'

// Inputs and reference modules (test/fixtures/codegen, copied from the reference corpus; see its README):
// offload/{a_one_cubin,c_empty}.bin and extern_c.fatbin; clang/wrap_*.ll is llvm-offload-wrapper (LLVM 22)
// output for them.
const offloadDir = join(fixturesDir, 'codegen', 'offload')
const clangDir = join(fixturesDir, 'codegen', 'clang')
const oneCubin = readFileSync(join(offloadDir, 'a_one_cubin.bin'))
const emptyImage = readFileSync(join(offloadDir, 'c_empty.bin'))
const externFatbin = readFileSync(join(offloadDir, 'extern_c.fatbin'))
const noSymbols: KernelManifest = { kernels: [], variables: [] }
const dir = tempDir('kp-wrapper-')
const run = (cmd: string, args: string[]) => execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })

function compileLl(name: string): string {
  const out = join(dir, `${name}.ref.o`)
  run(tool('clang'), ['-O2', '-Wno-override-module', '-c', join(clangDir, `${name}.ll`), '-o', out])
  return out
}

/** Compiles C with clang-22 and gcc, -Wall -Wextra, both with -Werror; returns [clang object, gcc object]. */
function compileC(name: string, c: string): [string, string] {
  const src = join(dir, `${name}.c`)
  writeFileSync(src, c)
  const clangObj = join(dir, `${name}.clang.o`)
  const gccObj = join(dir, `${name}.gcc.o`)
  run(tool('clang'), ['-O2', '-Wall', '-Wextra', '-Werror', '-c', src, '-o', clangObj])
  run(tool('gcc'), ['-O2', '-Wall', '-Wextra', '-Werror', '-c', src, '-o', gccObj])
  return [clangObj, gccObj]
}

// Sections whose content is code, unwind data or ELF bookkeeping: compared by neither side.
const skipSection = (name: string) => /^(\.text|\.rela|\.eh_frame|\.symtab|\.strtab|\.llvm_addrsig|\.note|\.comment|\.data$|\.rodata$)/.test(name) || name === ''

/** Every data section of the reference object must exist in ours with the same type, flags, size,
 * entry size, alignment and bytes (relocated fields are zero in RELA objects on both sides). */
function compareSections(ours: string, ref: string, except: string[] = []): string[] {
  const mine = new Map(readSections(ours).map((s) => [s.name, s]))
  const checked: string[] = []
  for (const r of readSections(ref)) {
    if (skipSection(r.name) || except.includes(r.name)) continue
    const o = mine.get(r.name)
    assert.ok(o, `section ${r.name} missing from our object`)
    const pick = (s: Section) => ({ type: s.type, flags: s.flags, size: s.size, entsize: s.entsize, align: s.align })
    assert.equal(pick(o!), pick(r), `section ${r.name}`)
    if (r.type !== 'NOBITS' && r.size > 0) assert.ok(Buffer.from(readSectionBytes(ours, r.name)).equals(readSectionBytes(ref, r.name)), `bytes of ${r.name}`)
    checked.push(r.name)
  }
  return checked
}

/** Every local data object of the reference (`.omp_offloading.*`, `.fatbin_*`…) exists in ours with the
 * same size, type, binding, section and offset. */
function compareSymbols(ours: string, ref: string, except: string[] = []): void {
  const mine = new Map(readSymbols(ours).map((s) => [s.name, s]))
  for (const r of readSymbols(ref)) {
    if (r.type !== 'OBJECT' || except.includes(r.name)) continue
    const o = mine.get(r.name)
    assert.ok(o, `symbol ${r.name} missing from our object`)
    assert.equal({ size: o!.size, type: o!.type, bind: o!.bind, section: o!.section, value: o!.value }, { size: r.size, type: r.type, bind: r.bind, section: r.section, value: r.value }, `symbol ${r.name}`)
  }
}

// ---
const offload = suite('emitWrapperC offload')

offload('one binary: sections, sizes, alignments and bytes of LLVM 22 (wrap_openmp.ll)', () => {
  const { c } = emitWrapperC({ name: 'one', offload: oneCubin, manifest: noSymbols })
  const [ours, gccObj] = compileC('one', c)
  const ref = compileLl('wrap_openmp')
  const checked = compareSections(ours, ref)
  assert.equal(checked.sort(), ['.data.rel.ro', '.init_array.101', '.llvm.offloading', 'llvm_offload_entries'])
  compareSymbols(ours, ref)
  // GCC: the same image section (type from the section-spec suffix), 8-aligned, same bytes.
  const g = readSections(gccObj).find((s) => s.name === '.llvm.offloading')!
  assert.equal([g.type, g.size, g.align], ['LLVM_OFFLOADING', 7776, 8])
  assert.ok(Buffer.from(readSectionBytes(gccObj, '.llvm.offloading')).equals(oneCubin))
})

offload('two binaries: two device images, ImageStart/End at the inner images (wrap_openmp_2img.ll)', () => {
  const { c } = emitWrapperC({ name: 'two', offload: Buffer.concat([oneCubin, emptyImage]), manifest: noSymbols })
  const [ours] = compileC('two', c)
  const ref = compileLl('wrap_openmp_2img')
  compareSections(ours, ref)
  compareSymbols(ours, ref)
  assert.match(c, /kp_two_image_0 \+ 144, kp_two_image_0 \+ 7776/)
  assert.match(c, /kp_two_image_1 \+ 144, kp_two_image_1 \+ 144/)
})

offload('entries: 56-byte records equal to clang-22 host output for the same kernels and variables', async () => {
  // static_kernels.cu has external, static and template kernels plus __device__/__constant__ variables.
  const cu = join(fixturesDir, 'reference-cu', 'static_kernels.cu')
  const common = ['-x', 'cuda', '--offload-new-driver', '-fgpu-rdc', '-cuid=kp', '--cuda-path=/usr/local/cuda', '-I', clangCurandShim(), '--offload-arch=sm_90', '-O2', '-Wno-unknown-cuda-version']
  const host = join(dir, 'sk.host.o')
  const ptx = join(dir, 'sk.ptx')
  run(tool('clang++'), [...common, '--cuda-host-only', '-c', cu, '-o', host])
  run(tool('clang++'), [...common, '--cuda-device-only', '-S', cu, '-o', ptx])
  // Records by name: clang names each `.offloading.entry.<name>` at its offset.
  const refBytes = readSectionBytes(host, 'llvm_offload_entries')
  const refRecords = new Map(readSymbols(host).filter((s) => s.name.startsWith('.offloading.entry.')).map((s) => [s.name.slice('.offloading.entry.'.length), Buffer.from(refBytes.subarray(s.value, s.value + s.size))]))
  // The device PTX also has static_unreferenced, which clang's host side never emits (unused static);
  // keep the entities clang registered, with kind, space and size as the PTX gives them.
  const full = await readPtxManifest(readFileSync(ptx, 'utf8'), { demangle: false })
  const manifest: KernelManifest = { kernels: full.kernels.filter((k) => refRecords.has(k.name)), variables: full.variables.filter((v) => refRecords.has(v.name)) }
  assert.equal([...new Set(full.kernels.filter((k) => !refRecords.has(k.name)).map((k) => k.name.replace(/__intern__.*/, '')))], ['_ZL19static_unreferencedPi'])
  const { c } = emitWrapperC({ name: 'sk', offload: oneCubin, manifest })
  const [ours, gccObj] = compileC('sk', c)
  const refEntries = readSections(host).find((s) => s.name === 'llvm_offload_entries')!
  const ourEntries = readSections(ours).find((s) => s.name === 'llvm_offload_entries')!
  assert.equal(ourEntries, refEntries)
  const ourBytes = readSectionBytes(ours, 'llvm_offload_entries')
  const names = [...new Set([...manifest.kernels.map((k) => k.name), ...manifest.variables.map((v) => v.name)])].filter((n) => !n.startsWith('__clang_'))
  assert.is(refRecords.size, names.length)
  names.forEach((name, i) => {
    assert.ok(refRecords.has(name), `clang has no entry for ${name}`)
    assert.equal([...ourBytes.subarray(i * 56, i * 56 + 56)], [...refRecords.get(name)!], `record of ${name}`)
  })
  // Names: the same strings in a section with the same type and flags (mergeable strings).
  const pick = (s?: Section) => s && { type: s.type, flags: s.flags, entsize: s.entsize, align: s.align, size: s.size }
  assert.equal(pick(readSections(ours).find((s) => s.name === '.llvm.rodata.offloading')), pick(readSections(host).find((s) => s.name === '.llvm.rodata.offloading')))
  const strings = (obj: string) => Buffer.from(readSectionBytes(obj, '.llvm.rodata.offloading')).toString('latin1').split('\0').filter(Boolean).sort()
  assert.equal(strings(ours), strings(host))
  assert.equal(strings(gccObj), strings(host))
  assert.is(readSections(gccObj).find((s) => s.name === 'llvm_offload_entries')!.size, names.length * wrapperLayout.entrySize)
})

offload('every byte value survives the C: a 256 KiB image through gcc and clang', () => {
  const image = new Uint8Array(256 * 1024)
  let x = 0x12345678
  for (let i = 0; i < image.length; i++) image[i] = i < 256 ? i : (x = (Math.imul(x, 1103515245) + 12345) >>> 0) >>> 24
  const bin = writeOffloadBinary({ imageKind: 3, offloadKind: 2, strings: { triple: 'nvptx64-nvidia-cuda', arch: 'sm_90' }, image })
  const { c } = emitWrapperC({ name: 'big', offload: bin, manifest: noSymbols })
  for (const obj of compileC('big', c)) assert.ok(Buffer.from(readSectionBytes(obj, '.llvm.offloading')).equals(bin), obj)
})

offload('bad input is a clear error', () => {
  const badSize = { kernels: [], variables: [{ name: 'v', space: 'global', size: -1, linkage: 'visible' }] } as KernelManifest
  assert.throws(() => emitWrapperC({ name: 'x', offload: oneCubin, manifest: badSize }), /"v" has size -1/)
  assert.throws(() => emitWrapperC({ name: 'x', offload: new Uint8Array(8), manifest: noSymbols }), /not an offload binary|holds no binaries/)
})

offload.run()

// ---
const cuda = suite('emitWrapperC cuda')

for (const [ll, input] of [['wrap_cuda_fatbin', externFatbin], ['wrap_cuda_packaged', oneCubin]] as const) {
  cuda(`.nv_fatbin, .nvFatBinSegment, handle and constructor as LLVM 22 (${ll}.ll)`, () => {
    const { c } = emitWrapperC({ name: ll, offload: oneCubin, manifest: noSymbols, fatbin: input }, { flavor: 'cuda' })
    const [ours, gccObj] = compileC(ll, c)
    const ref = compileLl(ll)
    // llvm_offload_entries: LLVM walks every entry of the link; ours registers only its own module's
    // entities by direct calls (see emit-wrapper.ts), so it has no such section.
    const checked = compareSections(ours, ref, ['llvm_offload_entries'])
    assert.equal(checked.sort(), ['.bss', '.init_array.101', '.nvFatBinSegment', '.nv_fatbin'])
    compareSymbols(ours, ref, ['__dummy.llvm_offload_entries'])
    const seg = readSectionBytes(gccObj, '.nvFatBinSegment')
    const view = new DataView(seg.buffer, seg.byteOffset, seg.byteLength)
    assert.equal([view.getUint32(0, true), view.getUint32(4, true), seg.byteLength], [wrapperLayout.fatbinMagic, 1, 24])
    assert.ok(Buffer.from(readSectionBytes(gccObj, '.nv_fatbin')).equals(input))
  })
}

cuda('without a fatbin it says how to get one', () => {
  assert.throws(() => emitWrapperC({ name: 'x', offload: oneCubin, manifest: noSymbols }, { flavor: 'cuda' }), /fatbinary/)
})

cuda.run()

// ---
const legacy = suite('emitWrapperC legacy')

legacy('32-byte entries, raw images, arch list and image info', () => {
  const manifest: KernelManifest = { kernels: [{ name: 'saxpy', demangled: 'saxpy', linkage: 'visible', params: [] }], variables: [{ name: 'g', space: 'global', size: 4, linkage: 'visible', align: 4 }] }
  const { c } = emitWrapperC({ name: 'leg', offload: Buffer.concat([oneCubin, emptyImage]), manifest }, { flavor: 'legacy' })
  const [ours] = compileC('leg', c)
  const sections = new Map(readSections(ours).map((s) => [s.name, s]))
  assert.is(sections.get('omp_offloading_entries')!.size, 2 * wrapperLayout.legacyEntrySize)
  assert.equal(Buffer.from(readSectionBytes(ours, '.offload_arch_list')).toString('latin1'), 'sm_90\0sm_90\0')
  const syms = new Map(readSymbols(ours).map((s) => [s.name, s]))
  assert.is(syms.get('.omp_offloading.device_image')!.size, 7776 - 144)
  assert.ok(syms.has('.offload_image_info.1'))
  assert.match(c, /__tgt_register_image_info\(&kp_leg_image_info_1\);\n {2}__tgt_register_lib/)
  // Entry bytes: {addr, name, size, flags, reserved}: size 0 for the kernel, 4 for the variable.
  const e = readSectionBytes(ours, 'omp_offloading_entries')
  const dv = new DataView(e.buffer, e.byteOffset, e.byteLength)
  assert.equal([Number(dv.getBigUint64(16, true)), Number(dv.getBigUint64(48, true))], [0, 4])
})

legacy.run()

// ---
const names = suite('sanitizeIdentifier')

names('keeps C identifiers, hex-escapes the rest', () => {
  assert.is(sanitizeIdentifier('_Z6vecAddPfS_S_i'), '_Z6vecAddPfS_S_i')
  assert.is(sanitizeIdentifier('a*/b"$'), 'a_x2a_x2fb_x22_x24')
  assert.is(sanitizeIdentifier('1x'), '_1x')
  assert.is(hostSymbolName('vec-add', 'saxpy'), 'kp_vec_x2dadd_saxpy')
})

names('hostile names cannot break the C: compiles and keeps the exact bytes', () => {
  const evil = 'k*/ "\\\n??/'
  const manifest: KernelManifest = { kernels: [{ name: evil, demangled: evil, linkage: 'visible', params: [] }], variables: [] }
  for (const flavor of ['offload', 'legacy', 'cuda'] as const) {
    const { c, h } = emitWrapperC({ name: 'evil */ "x', offload: oneCubin, manifest, fatbin: externFatbin, hostRefs: { symbols: [{ name: evil, kind: 'kernel', linkage: 'visible' }] } }, { flavor })
    const [ours] = compileC(`evil_${flavor}`, c)
    writeFileSync(join(dir, `evil_${flavor}.h`), h!)
    run(tool('gcc'), ['-Wall', '-Wextra', '-Werror', '-fsyntax-only', '-x', 'c', join(dir, `evil_${flavor}.h`)])
    run(tool('clang++'), ['-Wall', '-Werror', '-fsyntax-only', '-x', 'c++', join(dir, `evil_${flavor}.h`)])
    const hr = Buffer.from(readSectionBytes(ours, '.nvHRKE')).toString('latin1')
    assert.is(hr, evil + '\0')
  }
})

names.run()
