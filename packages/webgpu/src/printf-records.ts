// Device printf's records (emit-printf.ts, layout.ts PRINTF_*) into text, loaded by the backend with the first
// records a synchronization finds: decoded, put in the order the emulator's thread loops make them, formatted
// and grouped as a GPU prints them with the emulator's own formatPrintf and PrintfOrder (@kernelpack/ptx/printf).
import { defaultPrint, formatPrintf, printfArgBytes, printfConversions, PrintfOrder } from '@kernelpack/ptx/printf'
import { FAULT_RECORD_BYTES, MAP_READ, PRINTF_BYTES, PRINTF_HEADER_WORDS, USAGE_COPY_DST, USAGE_MAP_READ } from './layout.js'

/** What the backend lends: its device, the buffer with the records, its queue discipline. */
export interface PrintfContext {
  device: GPUDevice
  faultRecord: GPUBuffer
  serial<T>(f: () => T | Promise<T>): Promise<T>
  submitChecked(what: string, encode: (enc: GPUCommandEncoder) => void): void
}

/** Reads the records (`words` asked for since the last read, PRINTF_BYTES of them at most), resets the counter
 *  and prints them (printRecords); the launches printed leave `formats`. Returns the print function used. */
export async function flushPrintf(ctx: PrintfContext, words: number, formats: Map<number, readonly string[]>, print: ((text: string) => void) | undefined): Promise<(text: string) => void> {
  const { device, faultRecord, serial, submitChecked } = ctx
  const out = print ?? defaultPrint()
  if (typeof out !== 'function') throw new TypeError(`the webgpu backend's print option must be a function, got ${typeof out}`)
  const n = Math.min(words, PRINTF_BYTES / 4)
  const staging = await serial(() => {
    const buf = device.createBuffer({ label: 'kernelpack printf readback', size: n * 4, usage: USAGE_MAP_READ | USAGE_COPY_DST })
    submitChecked('reading device printf', (enc) => enc.copyBufferToBuffer(faultRecord, FAULT_RECORD_BYTES + 4, buf, 0, n * 4))
    device.queue.writeBuffer(faultRecord, FAULT_RECORD_BYTES, new Uint32Array(1))
    return buf
  })
  let w: Uint32Array
  try {
    await staging.mapAsync(MAP_READ)
    w = new Uint32Array(staging.getMappedRange()).slice()
  } finally {
    staging.destroy()
  }
  const last = printRecords(w, n, formats, out)
  for (const k of [...formats.keys()]) if (k <= last) formats.delete(k)
  if (words > n) out(`[kernelpack: device printf output past ${PRINTF_BYTES} bytes was dropped, as CUDA drops it past its printf FIFO]\n`)
  return out
}

interface PrintfRecord { launch: number; block: number; t: number; bars: number; cols: number; seq: number; site: number; at: number; len: number }

const align8 = (n: number) => Math.ceil(n / 8) * 8

/** Where each `%s` argument's pointer sits in a format's argument buffer (bytes). */
function stringArgs(fmt: string): number[] {
  return printfConversions(fmt).filter((c) => c.conv === 's').map((c) => c.at)
}

/** Prints the records in the first `n` words of `w` (`formats`: each launch's format strings, by call site):
 *  launch by launch, block by block, each block's records by barriers passed, warp, warp collectives passed,
 *  lane and the thread's own order, grouped per warp and call (PrintfOrder). Returns the last launch printed. */
export function printRecords(w: Uint32Array, n: number, formats: ReadonlyMap<number, readonly string[]>, print: (text: string) => void): number {
  const recs: PrintfRecord[] = []
  for (let at = 0; at + PRINTF_HEADER_WORDS <= n;) {
    const len = w[at]!
    if (len < PRINTF_HEADER_WORDS || at + len > n) break
    recs.push({ launch: w[at + 2]!, block: w[at + 3]!, t: w[at + 4]!, bars: w[at + 5]!, cols: w[at + 6]!, seq: w[at + 7]!, site: w[at + 1]!, at, len })
    at += len
  }
  recs.sort((a, b) => a.launch - b.launch || a.block - b.block || a.bars - b.bars || (a.t >>> 5) - (b.t >>> 5) || a.cols - b.cols || (a.t & 31) - (b.t & 31) || a.seq - b.seq)
  const bytes = new Uint8Array(w.buffer, w.byteOffset, w.byteLength)
  let launch = -1
  const order = new PrintfOrder((text) => print(text))
  // each format's bytes, encoded once for all the records of its call (a kernel's threads print thousands)
  const encoder = new TextEncoder()
  const encoded = new Map<string, { text: Uint8Array; words: number; strings: number[] }>()
  for (const r of recs) {
    if (r.launch !== launch) { order.flush(); launch = r.launch }
    const fmt = formats.get(r.launch)?.[r.site]
    if (fmt === undefined) continue
    // the format (NUL-terminated), the argument words and each %s string (NUL-terminated), as device memory
    // for formatPrintf, each string's pointer in the arguments pointing at its copy
    let f = encoded.get(fmt)
    if (!f) { f = { text: encoder.encode(fmt), words: Math.ceil(printfArgBytes(fmt) / 4), strings: stringArgs(fmt) }; encoded.set(fmt, f) }
    const argsAt = align8(f.text.length + 1)
    const strings: Uint8Array[] = []
    for (let o = r.at + PRINTF_HEADER_WORDS + f.words, k = 0; k < f.strings.length && o < r.at + r.len; k++) {
      const len = Math.min(w[o]!, 4 * (r.at + r.len - o - 1))
      strings.push(bytes.subarray(4 * (o + 1), 4 * (o + 1) + len))
      o += 1 + Math.ceil(len / 4)
    }
    const mem = new Uint8Array(argsAt + 4 * f.words + strings.reduce((n, x) => n + x.length + 1, 0))
    mem.set(f.text, 0)
    mem.set(bytes.subarray(4 * (r.at + PRINTF_HEADER_WORDS), 4 * (r.at + PRINTF_HEADER_WORDS + f.words)), argsAt)
    const dv = new DataView(mem.buffer)
    for (let k = 0, at = argsAt + 4 * f.words; k < strings.length; at += strings[k]!.length + 1, k++) {
      mem.set(strings[k]!, at)
      dv.setBigUint64(argsAt + f.strings[k]!, BigInt(at), true)
    }
    order.add(formatPrintf(mem, 0, argsAt), r.t, r.block, r.site)
  }
  order.flush()
  return launch
}
