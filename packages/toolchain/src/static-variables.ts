// clang drops a `static __constant__` / `static __device__` variable that no device code writes (issue 14):
// with internal linkage and no device-side store, its loads fold to the initializer and the variable leaves
// the PTX, so a host write (cudaMemcpyToSymbol, `mod.global(name)`) has nothing to reach, and the kernels
// read its initializer. nvcc keeps such variables (the host side registers them). This finds the static
// device variables a file declares and says which ones a build's PTX lacks.
import type { KernelManifest } from '@kernelpack/offload'
import type { Diagnostic } from './errors.js'

export interface StaticDeviceVariable { name: string; line: number; column: number; space: '__constant__' | '__device__' }

/** Comments, string/character literals and preprocessor lines replaced by spaces (offsets and lines kept). */
function blankNonCode(text: string): string {
  return text.replace(/\/\/[^\n]*|\/\*[\s\S]*?\*\/|"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|^[ \t]*#(?:[^\n]*\\\n)*[^\n]*/gm, (m) => m.replace(/[^\n]/g, ' '))
}

// `static __constant__ float c[4];`, `__device__ static int n = 3;`: a declaration without parentheses
const DECL = /\b(?:static\s+((?:(?:const|volatile|__managed__)\s+)*)(__constant__|__device__)|(__constant__|__device__)\s+((?:(?:const|volatile|__managed__)\s+)*)static)\b([^;(){}=]*?)\b([A-Za-z_]\w*)\s*((?:\[[^\]]*\]\s*)*)(?:=[^;]*)?;/g

/** The `static __constant__` / `static __device__` variables of a source text, with their positions. */
export function findStaticDeviceVariables(text: string): StaticDeviceVariable[] {
  const code = blankNonCode(text)
  const out: StaticDeviceVariable[] = []
  for (const m of code.matchAll(DECL)) {
    const name = m[6]!
    const at = m.index! + m[0].lastIndexOf(name, m[0].length - (m[7]?.length ?? 0) - 1)
    const before = code.slice(0, at)
    const line = before.split('\n').length
    out.push({ name, line, column: at - before.lastIndexOf('\n'), space: (m[2] ?? m[3]) as '__constant__' | '__device__' })
  }
  return out
}

/** Whether the manifest has a variable of this source name (plain, or Itanium-mangled: `_ZL6coeffs`,
 *  `_ZN2ns6coeffsE`). */
function hasVariable(manifest: KernelManifest, name: string): boolean {
  const mangled = new RegExp(`(^|[^0-9])${name.length}${name}(E|$)`)
  return (manifest.variables ?? []).some((v) => v.name === name || mangled.test(v.name))
}

/** Warnings for the static device variables of `sources` (path → text) that clang's PTX does not have. */
export function droppedStaticVariables(sources: ReadonlyArray<[string, string]>, manifest: KernelManifest): Diagnostic[] {
  const out: Diagnostic[] = []
  for (const [file, text] of sources) {
    for (const v of findStaticDeviceVariables(text)) {
      if (hasVariable(manifest, v.name)) continue
      out.push({
        file, line: v.line, column: v.column, severity: 'warning', code: 'kernelpack',
        message: `static ${v.space} variable '${v.name}' is not in the device code clang built: clang removes a static device variable that no device code writes (its reads become its initializer), so host writes (cudaMemcpyToSymbol, mod.global('${v.name}')) cannot reach it; declare it without 'static' (nvcc keeps it either way)`,
      })
    }
  }
  return out
}
