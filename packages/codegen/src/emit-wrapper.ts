// placeholder: filled in by the codegen work (see index.ts)
export {}
