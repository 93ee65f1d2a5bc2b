// The one serializer for text that came from a user file (a path, a kernel or variable name, a demangled
// C++ signature) and is written into generated JavaScript, TypeScript or C. Nothing else in codegen or the
// plugin writes user text into code.
//
// JavaScript/TypeScript: `JSON.stringify` alone is not enough. It leaves U+2028/U+2029 as they are, and in a
// `//` comment they end the line (ECMA-262 "Line Terminators"), so `// from "x<U+2028>evil()"` runs evil();
// it leaves `</script` and `<!--`, which end or open an HTML script element when a bundle is inlined into a
// page. jsString escapes those (`\u2028`, `<\/`, `\u003c!--`, escapes that keep the string's value), so
// its result is one string literal, also safe as the rest of a `//` comment line. Text inside a block
// comment (JSDoc of the launchers) goes through jsComment instead: readable, with `*/` and every line
// terminator escaped, so the comment cannot end early.
//
// C: names are written as hex bytes (emit-wrapper's hexLines), never as string literals; cComment makes
// text safe inside `/* */` (every byte outside printable ASCII and the backslash as \xNN, no `*/` or `/*`,
// so neither line splices nor trigraphs reach the compiler).

const JS_UNSAFE = /[\u2028\u2029]|<\/|<!--/g
const JS_ESCAPES: Record<string, string> = { '\u2028': '\\u2028', '\u2029': '\\u2029', '</': '<\\/', '<!--': '\\u003c!--' }

function escapeJs(json: string): string {
  // JSON's own escape sequences (\" \\ \n \uXXXX) contain none of these sequences, so each one found is
  // text of the value, and its escape keeps the value the same
  return json.replace(JS_UNSAFE, (m) => JS_ESCAPES[m]!)
}

/** A JavaScript/TypeScript string literal for `s`, safe in code and as the rest of a `//` comment line. */
export function jsString(s: string): string {
  if (typeof s !== 'string') throw new TypeError(`jsString: expected a string, got ${typeof s}`)
  return escapeJs(JSON.stringify(s))
}

/** A JavaScript expression for a JSON value (the manifest), with every string in it as jsString writes it. */
export function jsValue(v: unknown): string {
  const json = JSON.stringify(v)
  if (json === undefined) throw new TypeError('jsValue: the value has no JSON form')
  // outside string tokens JSON has none of the sequences escapeJs rewrites, so this touches strings only
  return escapeJs(json)
}

/** Text for inside a JS/TS block comment (JSDoc): as written, but the comment end and line terminators escaped. */
export function jsComment(text: string): string {
  return text.replace(/\*\/|[\r\n\u2028\u2029]/g, (m) => (m === '*/' ? '*\\/' : `\\u${m.charCodeAt(0).toString(16).padStart(4, '0')}`))
}

/** Text for inside a C block comment. */
export function cComment(text: string): string {
  let out = ''
  for (const byte of new TextEncoder().encode(text)) {
    if (byte < 0x20 || byte > 0x7e || byte === 0x5c) out += `\\x${byte.toString(16).padStart(2, '0')}`
    else out += String.fromCharCode(byte)
  }
  return out.replaceAll('*/', '*\\/').replaceAll('/*', '/\\*')
}
