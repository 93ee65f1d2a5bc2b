import { readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { fixturesDir } from '../helpers/tools.js'

export const offloadFixtures = join(fixturesDir, 'offload')
export const fixture = (name: string): Uint8Array => new Uint8Array(readFileSync(join(offloadFixtures, name)))

/** Every offload binary fixture (llvm-offload-binary outputs and clang's .llvm.offloading sections). */
export function fixtureBinaries(): string[] {
  return [
    ...readdirSync(offloadFixtures).filter((f) => f.endsWith('.bin')),
    ...readdirSync(join(offloadFixtures, 'clang')).filter((f) => f.endsWith('.offloading.bin')).map((f) => `clang/${f}`),
  ].sort()
}

/** Fields of the corpus' readable twin (`*.offloading.txt`), parsed independently of the codec. */
export interface TwinBinary { offset: number; size: number; version: number; imageKind: number; offloadKind: number; flags: number; imageOffset: number; imageSize: number; strings: [string, string][] }

export function parseTwin(text: string): TwinBinary[] {
  const out: TwinBinary[] = []
  for (const block of text.split(/\n(?=\[binary #)/).slice(1)) {
    const num = (re: RegExp): number => {
      const m = re.exec(block)
      if (!m) throw new Error(`twin lacks ${re}`)
      return Number(m[1])
    }
    out.push({
      offset: num(/at file offset (0x[0-9a-f]+)/),
      size: num(/\+0x08 size\s+(0x[0-9a-f]+)/),
      version: num(/\+0x04 version\s+(\d+)/),
      imageKind: num(/image_kind=(\d+)/),
      offloadKind: num(/offload_kind=(\d+)/),
      flags: num(/flags=(0x[0-9a-f]+)/),
      imageOffset: num(/image_offset=(0x[0-9a-f]+)/),
      imageSize: num(/image_size=(0x[0-9a-f]+)/),
      strings: [...block.matchAll(/string\[\d+\] @\+0x[0-9a-f]+: key@0x[0-9a-f]+='([^']*)' value@0x[0-9a-f]+='([^']*)'/g)].map((m) => [m[1]!, m[2]!]),
    })
  }
  return out
}
