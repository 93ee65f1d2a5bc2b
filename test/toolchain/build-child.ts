// Child process for the cache tests: builds the files named on the command line with one cache directory
// and prints one JSON line per file (sha256 of the .offload, the manifest, compile count).
// Usage: node --conditions=source --import tsx test/toolchain/build-child.ts CACHE_DIR ARCH FILE…
import { createHash } from 'node:crypto'
import { buildCudaFile } from '@kernelpack/toolchain'

const [cacheDir, arch, ...files] = process.argv.slice(2)
const launcher = process.env.KP_TEST_LAUNCHER
const results = await Promise.all(files.map((f) => buildCudaFile(f, { cacheDir: cacheDir!, arch: arch!, compiler: 'nvcc', ...(launcher ? { launcher } : {}) })))
for (const r of results) {
  process.stdout.write(JSON.stringify({ name: r.name, offload: createHash('sha256').update(r.offload).digest('hex'), manifest: r.manifest, compiles: r.stats.compiles }) + '\n')
}
