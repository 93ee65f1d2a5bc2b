// Everything in the repository is written for it (issue 31): no file under test/ or packages/ carries the
// header of a copied file (`// Source: github.com/…`, `// Licence: …`, `Copyright (c) …`, SPDX tags), and no
// licence file of someone else's code sits among the fixtures. Facts about public code (where a public kernel
// has a race, a format's layout) may be described in prose; code may not be copied in.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { basename, join } from 'node:path'
import { repoRoot } from './helpers/tools.js'

const s = suite('provenance: only code written for kernelpack')

const tracked = execFileSync('git', ['ls-files', '-z', '--', 'test', 'packages'], { cwd: repoRoot, encoding: 'utf8' }).split('\0').filter(Boolean)

/** The header lines of a copied file, as the corpus that issue 31 removed carried them. */
const copiedHeader = [
  /^\s*(\/\/|#|\*|\/\*)\s*(Source|Origin|Upstream)\s*:\s*\S*(github\.com|https?:)/i,
  /^\s*(\/\/|#|\*|\/\*)\s*Licen[cs]e\s*:/i,
  /^\s*(\/\/|#|\*|\/\*)\s*Copyright\s*(\(c\)|©|\d{4})/i,
  /SPDX-License-Identifier/,
]
const textFile = /\.(cu|cuh|h|hpp|c|cc|cpp|ptx|ts|js|mjs|cjs|md|json|wgsl|py|sh)$/

s('no tracked file under test/ or packages/ starts with a copied file\'s Source/Licence/Copyright header', () => {
  const hits: string[] = []
  for (const file of tracked) {
    if (!textFile.test(file) || file === 'test/provenance.test.ts' || !existsSync(join(repoRoot, file))) continue
    const head = readFileSync(join(repoRoot, file), 'utf8').split('\n', 40)
    head.forEach((line, i) => { if (copiedHeader.some((re) => re.test(line))) hits.push(`${file}:${i + 1}: ${line.trim().slice(0, 100)}`) })
  }
  assert.equal(hits, [], `copied-file headers found (remove the copy, or describe the fact in prose):\n${hits.join('\n')}`)
})

s('no licence file of third-party code under test/fixtures/', () => {
  const licences = tracked.filter((f) => f.startsWith('test/fixtures/') && /^(licen[cs]e|copying|notice)/i.test(basename(f)) || /\/licen[cs]es\//i.test(f))
  assert.equal(licences, [], `licence files under test/fixtures/: ${licences.join(', ')}`)
})

s('the patterns catch what they are for', () => {
  // the check must be able to fail: each pattern on the header line it exists for, and not on prose
  assert.ok(copiedHeader.some((re) => re.test('// Source: github.com/example/repo, path/file.cu')))
  assert.ok(copiedHeader.some((re) => re.test('// Licence: BSD-3-Clause (licences/x.txt)')))
  assert.ok(copiedHeader.some((re) => re.test(' * Copyright (c) 2019, Someone')))
  assert.ok(copiedHeader.some((re) => re.test('// SPDX-License-Identifier: MIT')))
  assert.not.ok(copiedHeader.some((re) => re.test('// the sanitizer finds the race in llm.c\'s softmax kernel (commit f1e2ace)')))
})

s.run()
