// Child process of cache-size.test.ts: stores and looks up entries of a CompileCache with a small size limit,
// so that eviction runs all the time while other processes read. Every hit must hold exactly the bytes stored
// for its key. Prints one JSON line { hits, stores }; exits 1 on a wrong entry or a thrown error.
// Usage: node --conditions=source --import tsx test/toolchain/cache-stress-child.ts CACHE_DIR SRC_DIR MAX_SIZE SEED OPS
import { join } from 'node:path'
import { CompileCache, hashDependency, sha256 } from '../../packages/toolchain/src/cache.js'
import { entryBytes, KEYS } from './cache-stress-data.js'

const [cacheDir, srcDir, maxSize, seed, ops] = process.argv.slice(2)
const cache = new CompileCache(cacheDir!, { maxSize: Number(maxSize) })
let s = Number(seed) >>> 0
const next = () => { s = (Math.imul(s, 1664525) + 1013904223) >>> 0; return s }
let hits = 0
let stores = 0
for (let i = 0; i < Number(ops); i++) {
  const k = next() % KEYS
  const inputKey = sha256('stress', String(k))
  const src = join(srcDir!, `k${k}.cu`)
  const hit = await cache.lookup(inputKey)
  if (hit) {
    const want = entryBytes(k)
    if (hit.bytes.length !== want.length || !hit.bytes.every((b, j) => b === want[j])) {
      console.error(`key ${k}: the cache returned other bytes`)
      process.exit(1)
    }
    hits++
    continue
  }
  const h = await hashDependency(src)
  if (!h) throw new Error(`cannot hash ${src}`)
  await cache.store(inputKey, [{ path: src, hash: h.hash, sig: h.sig }], { bytes: entryBytes(k), deps: [src], warnings: [] })
  stores++
}
process.stdout.write(JSON.stringify({ hits, stores }) + '\n')
