// Counts the floating-point multiply and add instructions of a kernel in a cubin, to compare the emulator's
// multiply-add contraction with ptxas's (issue 32). No disassembler ships with the CUDA 13 toolkit here, so
// this reads the ELF section `.text.<kernel>` itself (ELF64 section headers: e_shoff at 0x28, e_shentsize at
// 0x3a, e_shnum at 0x3c, e_shstrndx at 0x3e; sh_name, sh_offset at 0x18, sh_size at 0x20) and decodes the
// operation of each 16-byte sm_80 instruction from the low 9 bits of its first 64-bit word (bits 9-11 say
// whether operands are registers, immediates or constants). The values below were read from cubins of
// single-instruction kernels built by ptxas 13 for sm_80 (mul.f32 → FMUL, add.f32 → FADD, fma.rn.f32 → FFMA,
// and the same for f64).
import { execFileSync } from 'node:child_process'
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { tempDir, tool } from './tools.js'

const OPS: Record<number, string> = { 0x020: 'FMUL', 0x021: 'FADD', 0x023: 'FFMA', 0x028: 'DMUL', 0x029: 'DADD', 0x02b: 'DFMA' }

export interface FloatOps { FMUL: number; FADD: number; FFMA: number; DMUL: number; DADD: number; DFMA: number }

/** The bytes of ELF section `name`. */
function elfSection(elf: Uint8Array, name: string): Uint8Array {
  const dv = new DataView(elf.buffer, elf.byteOffset, elf.byteLength)
  const shoff = Number(dv.getBigUint64(0x28, true))
  const shentsize = dv.getUint16(0x3a, true)
  const shnum = dv.getUint16(0x3c, true)
  const strtab = shoff + dv.getUint16(0x3e, true) * shentsize
  const strOff = Number(dv.getBigUint64(strtab + 0x18, true))
  for (let i = 0; i < shnum; i++) {
    const h = shoff + i * shentsize
    let at = strOff + dv.getUint32(h, true)
    let s = ''
    while (elf[at] !== 0) s += String.fromCharCode(elf[at++]!)
    if (s === name) {
      const off = Number(dv.getBigUint64(h + 0x18, true))
      return elf.subarray(off, off + Number(dv.getBigUint64(h + 0x20, true)))
    }
  }
  throw new Error(`no section ${name} in the cubin`)
}

/** FMUL/FADD/FFMA/DMUL/DADD/DFMA counts of `kernel` in a cubin. */
export function countFloatOps(cubin: Uint8Array, kernel: string): FloatOps {
  const text = elfSection(cubin, `.text.${kernel}`)
  const dv = new DataView(text.buffer, text.byteOffset, text.byteLength)
  const n: FloatOps = { FMUL: 0, FADD: 0, FFMA: 0, DMUL: 0, DADD: 0, DFMA: 0 }
  for (let i = 0; i + 16 <= text.length; i += 16) {
    const op = OPS[dv.getUint32(i, true) & 0x1ff]
    if (op) n[op as keyof FloatOps]++
  }
  return n
}

/** Assembles `ptx` with ptxas for sm_80, `--fmad=true` or `false`; the cubin's bytes. */
export function assemble(ptx: string, fmad: boolean): Uint8Array {
  const dir = tempDir('kp-ptxas-')
  try {
    writeFileSync(join(dir, 'k.ptx'), ptx)
    execFileSync(tool('ptxas'), ['-arch=sm_80', `--fmad=${fmad}`, join(dir, 'k.ptx'), '-o', join(dir, 'k.cubin')])
    return new Uint8Array(readFileSync(join(dir, 'k.cubin')))
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
