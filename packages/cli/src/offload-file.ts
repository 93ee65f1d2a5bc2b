// File-level helpers for pack/unpack/inspect that keep memory flat for large images: an offload file
// is scanned through a metadata window (header, entries, strings) and image bytes are copied between
// file descriptors in chunks; outputs are written to a temporary file and renamed into place.
import { fstatSync, readSync, writeSync } from 'node:fs'
import { writeFileAtomicWith } from '@kernelpack/toolchain/atomic-write'
import { DecodeError, decodeBinaryAt, windowSource, WindowTooSmall } from '@kernelpack/offload/core'

import type { DecodedEntry } from '@kernelpack/offload/core'
import { UserError } from './errors.js'

/**
 * Bytes copied per read/write call. 512 KiB keeps the bounce buffer inside the CPU's L2 cache, so
 * the kernel's copy into it and back out stay cache hits; measured on 64 MiB images (chunks of
 * 128 KiB-4 MiB) it copies ~15% faster than 4 MiB, and the buffer adds only 0.5 MiB to peak memory.
 */
export const CHUNK = 512 << 10
/**
 * First read of each binary: the header, ~1000 entries and their strings, more than real binaries
 * carry (a larger window is read when the metadata runs past it). Kept small because for a large
 * image most of it is image bytes read for nothing: 64 KiB instead of 1 MiB saves ~1.5 ms per file.
 */
const WINDOW = 64 << 10

export interface ScannedEntry extends DecodedEntry {
  /** Index of the binary in the file. */
  binary: number
  binaryOffset: number
  version: number
  compressed: boolean
}

export interface ScannedBinary {
  offset: number
  size: number
  version: number
  compressed: boolean
  entries: ScannedEntry[]
}

function readAt(fd: number, position: number, length: number): Uint8Array {
  // Not zero-filled: every byte handed back is overwritten by the read (a short read is cut off).
  const buf = newBuffer(length)
  let done = 0
  while (done < length) {
    const n = readSync(fd, buf, done, length - done, position + done)
    if (n === 0) break
    done += n
  }
  return done === length ? buf : buf.subarray(0, done)
}

/**
 * Every binary in an open offload file, without reading large images: images beyond the metadata
 * window come back empty with `imageOffset` set (absolute in the file); images of compressed binaries
 * are held in memory (they must be inflated anyway).
 */
export async function scanOffloadFile(fd: number, path: string, windowSize = WINDOW): Promise<ScannedBinary[]> {
  const fileSize = fstatSync(fd).size
  if (fileSize === 0) throw new UserError(`${path}: empty file, not an offload binary`)
  const regions = regionsOf(fd, 0, fileSize, path, '')
  const out: ScannedBinary[] = []
  for (const region of regions) {
    let offset = region.start
    try {
      while (offset < region.end) {
        const left = region.end - offset
        let window = readAt(fd, offset, Math.min(left, windowSize))
        let decoded
        for (;;) {
          await loadCodecsIfCompressed(window)
          try {
            decoded = decodeBinaryAt(windowSource(window, left), 0)
            break
          } catch (err) {
            if (!(err instanceof WindowTooSmall)) throw err
            // Metadata past the window (many entries, long strings) or a compressed body: read 16x
            // more, up to the binary's declared size (header bytes 8..16), so what is held follows
            // what the decoder needs, not the size of the images.
            const head = window.length >= 16 ? window : readAt(fd, offset, Math.min(left, 16))
            if (head.length < 16) decodeBinaryAt(windowSource(head, head.length), 0) // throws: truncated
            const size = Number(new DataView(head.buffer, head.byteOffset).getBigUint64(8, true))
            const want = Math.min(left, size, Math.max(window.length * 16, 16))
            const next = want > window.length ? readAt(fd, offset, want) : window
            if (next.length <= window.length) throw err
            window = next
          }
        }
        const index = out.length
        const at = offset
        out.push({
          offset: at,
          size: decoded.size,
          version: decoded.version,
          compressed: decoded.compressed,
          entries: decoded.entries.map((e) => ({
            ...e,
            imageOffset: e.imageOffset === undefined ? undefined : at + e.imageOffset,
            binary: index,
            binaryOffset: at,
            version: decoded.version,
            compressed: decoded.compressed,
          })),
        })
        offset += decoded.next
      }
    } catch (err) {
      if (err instanceof DecodeError || err instanceof RangeError) {
        const at = (err as { offset?: number }).offset
        const where = at === undefined ? '' : ` (file offset ${offset + at}${region.name ? ` in ${region.name}` : ''})`
        throw new UserError(`${path}: ${err.message.replace(/ \(at byte offset \d+\)$/, '')}${where}; is it an offload binary written by llvm-offload-binary or kernelpack pack?`)
      }
      throw err
    }
  }
  return out
}

const SHT_LLVM_OFFLOADING = 0x6fff4c0b // llvm/BinaryFormat/ELF.h

interface Region { start: number; end: number; name: string }

/**
 * Where offload binaries lie in a file, following llvm-offload-binary (OffloadBinary.cpp,
 * extractOffloadBinaries): an offload binary is itself; an ELF object holds them in its
 * SHT_LLVM_OFFLOADING sections (clang -fgpu-rdc objects); a static archive in its members, each
 * read the same way (members of other kinds are skipped, as LLVM does). Anything else at the top
 * level is an error here (LLVM 22 silently extracts nothing, which hides mistakes).
 */
function regionsOf(fd: number, start: number, end: number, path: string, where: string): Region[] {
  const head = readAt(fd, start, Math.min(end - start, 8))
  const is = (bytes: number[]) => bytes.every((b, i) => head[i] === b)
  if (is([0x10, 0xff, 0x10, 0xad])) return [{ start, end, name: where }]
  if (is([0x7f, 0x45, 0x4c, 0x46])) return offloadingSections(fd, start, end, path, where)
  if (is([...'!<arch>\n'].map((c) => c.charCodeAt(0)))) {
    return archiveMembers(fd, start, end, path).flatMap((m) => {
      const h = readAt(fd, m.start, Math.min(m.end - m.start, 4))
      const known = (h[0] === 0x10 && h[1] === 0xff && h[2] === 0x10 && h[3] === 0xad) || (h[0] === 0x7f && h[1] === 0x45 && h[2] === 0x4c && h[3] === 0x46)
      return known ? regionsOf(fd, m.start, m.end, path, `member ${m.name}`) : []
    })
  }
  if (where) return []
  const shown = [...head.subarray(0, 4)].map((b) => b.toString(16).padStart(2, '0')).join(' ')
  throw new UserError(`${path}: not an offload binary: bad magic ${shown}, expected 10 ff 10 ad (or an ELF object or archive holding offload sections)`)
}

/** Members of a GNU or BSD-less `ar` archive (symbol table and long-name table skipped). */
function archiveMembers(fd: number, start: number, end: number, path: string): Region[] {
  const out: Region[] = []
  let longNames: Uint8Array = new Uint8Array(0)
  let at = start + 8
  while (at + 60 <= end) {
    const h = new TextDecoder('latin1').decode(readAt(fd, at, 60))
    if (h.slice(58, 60) !== '`\n') throw new UserError(`${path}: archive member header at ${at} is malformed`)
    const rawName = h.slice(0, 16).trimEnd()
    const size = Number(h.slice(48, 58).trim())
    if (!Number.isSafeInteger(size) || size < 0 || at + 60 + size > end) throw new UserError(`${path}: archive member at ${at} has a bad size`)
    const data = at + 60
    if (rawName === '//') longNames = readAt(fd, data, size)
    else if (rawName !== '/' && rawName !== '/SYM64/') {
      let name = rawName.endsWith('/') ? rawName.slice(0, -1) : rawName
      if (/^\/\d+$/.test(rawName)) {
        const off = Number(rawName.slice(1))
        const stop = longNames.indexOf(0x0a, off)
        name = new TextDecoder().decode(longNames.subarray(off, stop === -1 ? longNames.length : stop)).replace(/\/$/, '')
      }
      out.push({ start: data, end: data + size, name })
    }
    at = data + size + (size % 2)
  }
  return out
}

/** File ranges of the SHT_LLVM_OFFLOADING sections of a 64-bit little-endian ELF file at `base`. */
function offloadingSections(fd: number, base: number, limit: number, path: string, where: string): Region[] {
  const fileSize = limit - base
  const eh = readAt(fd, base, 64)
  if (eh.length < 64 || eh[4] !== 2 || eh[5] !== 1) {
    if (where) return [] // e.g. a 32-bit member of an archive: nothing kernelpack can hold
    throw new UserError(`${path}: only 64-bit little-endian ELF objects are read for offload sections`)
  }
  const v = new DataView(eh.buffer)
  const shoff = Number(v.getBigUint64(0x28, true))
  const shentsize = v.getUint16(0x3a, true)
  const shnum = v.getUint16(0x3c, true)
  const shstrndx = v.getUint16(0x3e, true)
  if (shentsize < 64 || shoff + shnum * shentsize > fileSize) throw new UserError(`${path}: ELF section header table (${shnum} × ${shentsize} bytes at ${shoff}) lies outside the ${fileSize}-byte file`)
  const table = readAt(fd, base + shoff, shnum * shentsize)
  const t = new DataView(table.buffer)
  const section = (i: number) => ({
    name: t.getUint32(i * shentsize, true),
    type: t.getUint32(i * shentsize + 4, true),
    offset: Number(t.getBigUint64(i * shentsize + 0x18, true)),
    size: Number(t.getBigUint64(i * shentsize + 0x20, true)),
  })
  const strtab = shstrndx < shnum ? section(shstrndx) : undefined
  const names = strtab && strtab.offset + strtab.size <= fileSize ? readAt(fd, base + strtab.offset, strtab.size) : new Uint8Array(0)
  const nameOf = (n: number) => {
    const end = names.indexOf(0, n)
    return n < names.length ? new TextDecoder().decode(names.subarray(n, end === -1 ? names.length : end)) : `#${n}`
  }
  const out: Region[] = []
  for (let i = 0; i < shnum; i++) {
    const s = section(i)
    if (s.type !== SHT_LLVM_OFFLOADING) continue
    if (s.offset + s.size > fileSize) throw new UserError(`${path}: section ${nameOf(s.name)} (${s.size} bytes at ${s.offset}) lies outside the file`)
    const name = `section ${nameOf(s.name)}${where ? ` of ${where}` : ''}`
    if (s.size > 0) out.push({ start: base + s.offset, end: base + s.offset + s.size, name })
  }
  return out
}

let codecsLoaded = false

/** A compressed (v3, InflatedSize != 0) header needs zlib/zstd: the package entry registers them. */
async function loadCodecsIfCompressed(header: Uint8Array): Promise<void> {
  if (codecsLoaded || header.length < 40) return
  const v = new DataView(header.buffer, header.byteOffset, header.byteLength)
  if (v.getUint32(4, true) >= 3 && v.getBigUint64(32, true) !== 0n) {
    await import('@kernelpack/offload')
    codecsLoaded = true
  }
}

/** Writes `write(fd)`'s output to `path` through a temporary file in the same directory, then renames it;
 *  temporary files that killed kernelpack processes left in that directory are removed first. */
export function writeAtomically(path: string, write: (fd: number) => void): void {
  try {
    writeFileAtomicWith(path, write)
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    if (code === 'ENOENT' || code === 'EACCES' || code === 'ENOTDIR') {
      throw new UserError(`cannot write '${path}': ${code === 'EACCES' ? 'permission denied' : 'its directory does not exist'}`)
    }
    throw err
  }
}

export function writeAll(fd: number, bytes: Uint8Array): void {
  let done = 0
  while (done < bytes.length) done += writeSync(fd, bytes, done, bytes.length - done)
}

/**
 * A byte buffer without the zero fill of `new Uint8Array` (callers overwrite it before use). A plain
 * Uint8Array view over Buffer.allocUnsafeSlow's memory: no shared pool, so it is freed with its view.
 */
export function newBuffer(length: number): Uint8Array {
  const b = Buffer.allocUnsafeSlow(length)
  return new Uint8Array(b.buffer, b.byteOffset, b.byteLength)
}

/** Copies `length` bytes starting at `position` of `from` to the current end of `to`, in chunks. */
export function copyRange(from: number, position: number, length: number, to: number, buffer: Uint8Array, what: string): void {
  let done = 0
  while (done < length) {
    const want = Math.min(buffer.length, length - done)
    const n = readSync(from, buffer, 0, want, position + done)
    if (n === 0) throw new UserError(`${what}: file ended after ${done} of ${length} bytes (did it change while being read?)`)
    writeAll(to, buffer.subarray(0, n))
    done += n
  }
}

/** The bytes of a scanned entry's image: from memory when held, else read from the file. */
export function imageBytes(fd: number, e: ScannedEntry): Uint8Array {
  if (e.image.length === e.imageSize || e.imageOffset === undefined) return e.image
  return readAt(fd, e.imageOffset, e.imageSize)
}

/** Writes a scanned entry's image to `path` (temp + rename), copying in chunks from the input. */
export function extractImage(fd: number, e: ScannedEntry, path: string): void {
  writeAtomically(path, (out) => {
    if (e.image.length === e.imageSize || e.imageOffset === undefined) writeAll(out, e.image)
    else copyRange(fd, e.imageOffset, e.imageSize, out, newBuffer(Math.min(CHUNK, Math.max(1, e.imageSize))), path)
  })
}
