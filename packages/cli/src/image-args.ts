// Command-line handling shared by `pack` and `unpack`, following llvm-offload-binary (LLVM 22):
// options in LLVM `cl` spelling (`-o F`, `-o=F`, `--image=…`, `--image …`, `--archive`), and the
// `--image=k=v,…` argument parsed the way its `getImageArguments` does: split on ",", each piece
// split at the first "=" (a piece without "=" is a key with an empty value), a repeated key gets its
// values joined with ",". The keys come back in the order LLVM's DenseMap iterates them, because
// that is the order the tool stores them in.
import { orderKeysLikeLLVM } from '@kernelpack/offload/core'
import { UsageError } from './errors.js'

export interface ImageArgs {
  /** The `--image` text as given, for messages. */
  text: string
  /** Keys in llvm-offload-binary's order (DenseMap iteration) with their (joined) values. */
  args: Map<string, string>
}

export function parseImageArgs(text: string): ImageArgs {
  const values = new Map<string, string>()
  const insertion: string[] = []
  for (const piece of text.split(',')) {
    const eq = piece.indexOf('=')
    const key = eq === -1 ? piece : piece.slice(0, eq)
    const value = eq === -1 ? '' : piece.slice(eq + 1)
    const old = values.get(key)
    if (old === undefined) {
      values.set(key, value)
      insertion.push(key)
    } else {
      values.set(key, `${old},${value}`)
    }
  }
  const args = new Map<string, string>()
  for (const key of orderKeysLikeLLVM(insertion)) args.set(key, values.get(key)!)
  return { text, args }
}

export interface ParsedOptions {
  output?: string
  inputs: string[]
  images: string[]
  archive: boolean
  json: boolean
  help: boolean
}

/** Parses LLVM-`cl`-style options; `allowed` lists the options this command takes. */
export function parseOptions(argv: string[], allowed: { output?: boolean; image?: boolean; archive?: boolean; json?: boolean }): ParsedOptions {
  const out: ParsedOptions = { inputs: [], images: [], archive: false, json: false, help: false }
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!
    if (a === '--') {
      out.inputs.push(...argv.slice(i + 1))
      break
    }
    if (!a.startsWith('-') || a === '-') {
      out.inputs.push(a)
      continue
    }
    const body = a.replace(/^--?/, '')
    const eq = body.indexOf('=')
    const name = eq === -1 ? body : body.slice(0, eq)
    const inline = eq === -1 ? undefined : body.slice(eq + 1)
    const value = (): string => {
      if (inline !== undefined) return inline
      const next = argv[++i]
      if (next === undefined) throw new UsageError(`option ${a} needs a value`)
      return next
    }
    if ((name === 'h' || name === 'help') && inline === undefined) out.help = true
    else if (name === 'o' && allowed.output) out.output = value()
    else if (name === 'image' && allowed.image) out.images.push(value())
    else if (name === 'archive' && allowed.archive && inline === undefined) out.archive = true
    else if (name === 'json' && allowed.json && inline === undefined) out.json = true
    else throw new UsageError(`unknown option ${a}`)
  }
  return out
}
