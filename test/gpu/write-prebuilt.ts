// `node --conditions=source --import tsx test/gpu/write-prebuilt.ts FILE` (run by `pnpm gpu:kit`): the kernel
// corpus's PTX for a GPU machine's kit (test/gpu/prebuilt.ts).
import { corpusUnits } from './corpus.js'
import { writePrebuilt } from './prebuilt.js'

const file = process.argv[2]
if (!file) {
  console.error('usage: write-prebuilt.ts FILE')
  process.exit(2)
}
const n = await writePrebuilt(file, corpusUnits)
console.log(`wrote ${file}: the PTX of ${n} kernel-corpus units`)
