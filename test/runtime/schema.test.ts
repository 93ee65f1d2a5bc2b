import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { execFileSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { tempDir, tool } from '../helpers/tools.js'
import { t, sizeof, alignof, offsetof, layout, encode, toHalfBits, toBfloat16Bits } from '@kernelpack/runtime'
import { readHostFacts, schemas, values, hex } from './host-structs.js'

const host = readHostFacts()

// ---
const Layout = suite('layout vs gcc')

Layout('at least 10 structs are compared', () => {
  assert.ok(Object.keys(host.layouts).length >= 10)
  for (const name of Object.keys(host.layouts)) assert.ok(schemas[name], `schema for ${name}`)
})

for (const name of Object.keys(schemas)) {
  Layout(`${name}: sizeof, alignof and every offsetof agree with gcc`, () => {
    const c = host.layouts[name]!
    const s = schemas[name]!
    assert.is(sizeof(s), c.size, 'sizeof')
    assert.is(alignof(s), c.align, 'alignof')
    for (const [field, off] of Object.entries(c.offsets)) assert.is(offsetof(s, field), off, `offsetof ${field}`)
  })
}

Layout.run()

// ---
const Encode = suite('encode')

for (const name of Object.keys(values)) {
  Encode(`${name}: bytes equal the gcc-built value`, () => {
    assert.is(hex(encode(schemas[name]!, values[name])), host.values[name])
  })
}

Encode('i128 / u128 as gcc stores __int128', () => {
  assert.is(hex(encode(t.i128, -(1n << 100n) - 12345n)), host.values.i128)
  assert.is(hex(encode(t.u128, (0xfedcba9876543210n << 64n) | 0x0123456789abcdefn)), host.values.u128)
})

Encode('rejects a wrong field, a missing field, a bad array length and out-of-range integers', () => {
  const S = schemas.S1!
  assert.throws(() => encode(S, { a: 1, b: 2 }), /value\.c: missing field \(i8\)/)
  assert.throws(() => encode(S, { a: 1, b: 2, c: 3, z: 4 }), /value\.z: no such field \(the fields are a, b, c\), got 4/)
  assert.throws(() => encode(S, { a: 200, b: 2, c: 3 }), /value\.a: expected i8 in \[-128, 127\]/)
  assert.throws(() => encode(schemas.S4!, { f: [1, 2], d: 0 }), /value\.f: expected an array of 3 f32/)
  assert.throws(() => encode(schemas.Bits!, { f: 1, u: 2 }), /exactly one of f, u, b/)
})

Encode('layout lists nested fields with dotted names', () => {
  const l = layout(schemas.Nested!)
  assert.is(l.size, 72)
  assert.equal(l.fields.find((f) => f.name === 'a.flags'), { name: 'a.flags', offset: 60, size: 5 })
})

Encode.run()

// ---
const Half = suite('toHalfBits / toBfloat16Bits')

Half('f16 agrees with gcc _Float16 conversion (round to nearest even) over edge values', () => {
  assert.is(toHalfBits(1.5).toString(16).padStart(4, '0'), host.values.half!.slice(2, 4) + host.values.half!.slice(0, 2))
  const xs = [0, -0, 1, -1, 0.1, 1 / 3, 65504, 65519, 65520, 1e6, 2 ** -14, 2 ** -24, 2 ** -25, 3 * 2 ** -26, 5.960464477539063e-8, 1.00048828125, 1.000732421875, NaN, Infinity, -Infinity, 0.000061, 3.14159]
  const src = `#include <stdio.h>\n#include <string.h>\n#include <math.h>\nint main(void){ double xs[] = {${xs.map((x) => (Number.isNaN(x) ? 'NAN' : x === Infinity ? 'INFINITY' : x === -Infinity ? '-INFINITY' : Object.is(x, -0) ? '-0.0' : x.toPrecision(17))).join(',')}};\n for (unsigned i = 0; i < sizeof xs / sizeof xs[0]; i++) { _Float16 h = (_Float16)xs[i]; unsigned short b; memcpy(&b, &h, 2); printf("%u\\n", b); } return 0; }\n`
  const dir = tempDir('kp-f16-')
  writeFileSync(join(dir, 'h.c'), src)
  execFileSync(tool('gcc'), ['-O0', '-o', join(dir, 'h'), join(dir, 'h.c'), '-lm'])
  const bits = execFileSync(join(dir, 'h'), { encoding: 'utf8' }).trim().split('\n').map(Number)
  xs.forEach((x, i) => {
    const got = toHalfBits(x)
    if (Number.isNaN(x)) assert.ok((got & 0x7c00) === 0x7c00 && (got & 0x3ff) !== 0, 'NaN')
    else assert.is(got, bits[i], `f16(${x})`)
  })
})

Half('bf16 keeps the top half of the float32 and rounds ties to even', () => {
  assert.is(toBfloat16Bits(-3.5).toString(16).padStart(4, '0'), host.values.bf16!.slice(2, 4) + host.values.bf16!.slice(0, 2))
  assert.is(toBfloat16Bits(1), 0x3f80)
  assert.is(toBfloat16Bits(1 + 2 ** -8), 0x3f80) // tie between 0x3f80 and 0x3f81 → even
  assert.is(toBfloat16Bits(1 + 3 * 2 ** -8), 0x3f82) // tie between 0x3f81 and 0x3f82 → even
  assert.is(toBfloat16Bits(1 + 2 ** -8 + 2 ** -20), 0x3f81) // above the tie
})

Half.run()
