// Turns the `source` argument of loadModule into bytes without Node built-ins: bytes, a Response, or a URL
// fetched with the global fetch (browsers, and http(s)/data URLs in Node).

export type ModuleSource = Uint8Array | ArrayBuffer | ArrayBufferView | string | URL | Response

export function isResponse(x: unknown): x is Response {
  return typeof Response !== 'undefined' && x instanceof Response
}

/** Bytes of an in-memory source, or undefined when it needs I/O. */
export function bytesOf(source: unknown): Uint8Array | undefined {
  if (source instanceof Uint8Array) return source
  if (source instanceof ArrayBuffer) return new Uint8Array(source)
  if (ArrayBuffer.isView(source)) return new Uint8Array(source.buffer, source.byteOffset, source.byteLength)
  return undefined
}

export async function readResponse(res: Response, name: string): Promise<Uint8Array> {
  if (!res.ok) throw new Error(`${name}: HTTP ${res.status} ${res.statusText} while fetching the module`)
  return new Uint8Array(await res.arrayBuffer())
}

export async function fetchBytes(url: string | URL): Promise<Uint8Array> {
  const name = String(url)
  let res: Response
  try {
    res = await fetch(url)
  } catch (err) {
    throw new Error(`${name}: cannot fetch the module: ${(err as Error).message}`, { cause: err })
  }
  return readResponse(res, name)
}

export function describeSource(source: unknown): string {
  if (typeof source === 'string') return source
  if (source instanceof URL) return source.href
  if (isResponse(source)) return source.url || 'Response'
  return 'module bytes'
}
