// Pack and unpack of a 64 MiB and a 512 MiB random image: `kernelpack` (the built CLI, spawned like
// a user runs it) against `llvm-offload-binary`, side by side in the same run. Time is the median
// wall time of a few interleaved runs after one warm-up each; memory is the peak RSS from GNU time.
// Targets (issue 2): time ratio <= 1.0, kernelpack's peak memory <= 1.2 x the image size.
// Smoke mode (KP_BENCH_SMOKE=1, bench/lib.ts): 1 MiB and 2 MiB images, one untimed and one timed run per side.
import { spawnSync } from 'node:child_process'
import { randomFillSync } from 'node:crypto'
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { interleaved, measureCommand, median, smoke } from './lib.js'
import type { BenchResult } from './lib.js'

const root = join(import.meta.dirname, '..')
const MiB = 1 << 20

function llvmTool(): string {
  const p = join(process.env.LLVM_BIN ?? '/usr/lib/llvm-22/bin', 'llvm-offload-binary')
  const r = spawnSync(p, ['--version'])
  if (r.error) throw new Error(`llvm-offload-binary not found at ${p}: apt-get install -y llvm-22`)
  return p
}

function writeRandom(path: string, size: number): void {
  const fd = openSync(path, 'w')
  const chunk = new Uint8Array(8 * MiB)
  for (let done = 0; done < size; done += chunk.length) {
    randomFillSync(chunk)
    writeSync(fd, chunk, 0, Math.min(chunk.length, size - done))
  }
  closeSync(fd)
}

function sameFiles(a: string, b: string): boolean {
  // Compared in one go: this runs outside the measured commands.
  return readFileSync(a).equals(readFileSync(b))
}

export async function run(): Promise<BenchResult[]> {
  const llvm = llvmTool()
  const build = spawnSync(process.execPath, [join(root, 'scripts/build.mjs'), 'offload', 'cli'], { stdio: 'inherit' })
  if (build.status !== 0) throw new Error('node scripts/build.mjs offload cli failed')
  const kernelpack = join(root, 'packages/cli/bin/kernelpack.mjs')
  const dir = mkdtempSync(join(tmpdir(), 'kp-bench-offload-'))
  const results: BenchResult[] = []
  try {
    // [label, bytes, timed runs, untimed runs first]: one warm-up run for the small image (page cache,
    // first-run costs); the large one was just written, so it is in the page cache already, and each of its
    // runs takes seconds
    const images = smoke ? [['1 MiB', MiB, 1, 1], ['2 MiB', 2 * MiB, 1, 1]] as const : [['64 MiB', 64 * MiB, 5, 1], ['512 MiB', 512 * MiB, 3, 0]] as const
    for (const [index, [label, size, runs, warmup]] of images.entries()) {
      const image = join(dir, `r${size / MiB}.cubin`)
      writeRandom(image, size)
      const spec = `--image=file=${image},triple=nvptx64-nvidia-cuda,arch=sm_90,kind=cuda`
      const ops = {
        pack: {
          ours: [process.execPath, [kernelpack, 'pack', '-o', join(dir, 'ours.bin'), spec]],
          ref: [llvm, ['-o', join(dir, 'ref.bin'), spec]],
        },
        unpack: {
          ours: [process.execPath, [kernelpack, 'unpack', join(dir, 'ref.bin'), `--image=file=${join(dir, 'ours.out')},arch=sm_90`]],
          ref: [llvm, [join(dir, 'ref.bin'), `--image=file=${join(dir, 'ref.out')},arch=sm_90`]],
        },
      } as const
      for (const [op, cmds] of Object.entries(ops)) {
        const times = { ours: [] as number[], ref: [] as number[] }
        const peaks = { ours: [] as number[], ref: [] as number[] }
        // interleaved A B, B A, … (bench/lib.ts): load drift hits both sides alike; the first `warmup`
        // rounds are untimed
        await interleaved(runs + warmup, ['ref', 'ours'] as const, (who, round) => {
          const [cmd, args] = cmds[who]
          const m = measureCommand(cmd, [...args])
          if (m.status !== 0) throw new Error(`${who} ${op} ${label} failed (${m.status}): ${m.stderr}`)
          if (round < warmup) return
          times[who].push(m.seconds)
          peaks[who].push(m.peakBytes)
        })
        const same = op === 'pack' ? sameFiles(join(dir, 'ours.bin'), join(dir, 'ref.bin')) : sameFiles(join(dir, 'ours.out'), image) && sameFiles(join(dir, 'ref.out'), image)
        if (!same) throw new Error(`${op} ${label}: kernelpack and llvm-offload-binary outputs differ`)
        const t = median(times.ours)
        const tr = median(times.ref)
        const mem = Math.max(...peaks.ours) / MiB
        const memRef = Math.max(...peaks.ref) / MiB
        if (op === 'unpack' && index === 0) {
          // The floor under every kernelpack figure: starting Node itself, measured in the same run.
          const node = Array.from({ length: runs }, () => measureCommand(process.execPath, ['-e', '0']).seconds)
          results.push({ name: 'offload: node startup alone (floor of the times above)', value: median(node), unit: 's', reference: `llvm-offload-binary unpack ${label}`, referenceValue: median(times.ref), ratio: median(node) / median(times.ref), target: 'informative' })
        }
        results.push(
          { name: `offload ${op} ${label}: time`, value: t, unit: 's', reference: 'llvm-offload-binary', referenceValue: tr, ratio: t / tr, target: 'ratio <= 1.0' },
          { name: `offload ${op} ${label}: peak RSS / image size`, value: mem, unit: 'MiB', reference: 'image size', referenceValue: size / MiB, ratio: mem / (size / MiB), target: 'ratio <= 1.2' },
          { name: `offload ${op} ${label}: peak RSS`, value: mem, unit: 'MiB', reference: 'llvm-offload-binary', referenceValue: memRef, ratio: mem / memRef, target: 'ratio <= 1.0 (informative)' },
        )
      }
      rmSync(image, { force: true })
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
  return results
}
