// The one rename every export name of a stub goes through (kernel-names.ts): on its own, because the browser
// runtime needs only this for a module whose kernels are all extern "C" (the rest of the naming rules are
// loaded for C++ kernels). Pure: no Node APIs.

/** Export names that would change the meaning of the stub module itself: a module namespace with a `then`
 *  export is a thenable, so `await import('./k.cu')` would call the launcher instead of giving the module.
 *  A kernel with such a name is exported as `<name>_` (issue 17 item 6). */
export const SEMANTIC_EXPORTS: ReadonlySet<string> = new Set(['then'])

/** A name with `_` appended where it is a semantic export (`then` → `then_`). */
export const exportOf = (name: string): string => (SEMANTIC_EXPORTS.has(name) ? `${name}_` : name)
