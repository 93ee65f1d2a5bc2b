import { codecs } from './codecs.js'
import { setCodecs } from './read.js'

export * from './core.js'

// The package entry reads and writes compressed (v3) binaries too.
setCodecs(codecs)
