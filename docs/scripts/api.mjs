// Generates the API reference, reference/api/*.md (git-ignored), from the packages' declaration files
// (dist/*.d.ts, written by `pnpm build`) with TypeDoc and typedoc-plugin-markdown: one page per entry of
// reference/entries/, each re-exporting one package entry point. Run by the docs' `dev` and `build`
// scripts, so the reference always describes the packages as built.
import { existsSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { Application } from 'typedoc'

const docs = join(import.meta.dirname, '..')
const repo = join(docs, '..')
const entries = join(docs, 'reference', 'entries')
const out = join(docs, 'reference', 'api')

/** The declaration files the entries read; without them TypeDoc would document nothing useful. */
const declarations = ['runtime', 'unplugin'].map((p) => join(repo, 'packages', p, 'dist', 'index.d.ts'))
const missing = declarations.filter((f) => !existsSync(f))
if (missing.length > 0) {
  console.error(`docs: no declaration files to document (${missing.join(', ')} missing); build the packages first: pnpm build`)
  process.exit(1)
}

rmSync(out, { recursive: true, force: true })
const app = await Application.bootstrapWithPlugins({
  entryPoints: ['runtime.ts', 'unplugin-cuda.ts', 'unplugin-cuda-node.ts'].map((f) => join(entries, f)),
  tsconfig: join(entries, 'tsconfig.json'),
  plugin: ['typedoc-plugin-markdown'],
  out,
  name: 'API reference',
  readme: 'none',
  // the declarations were checked when they were built; TypeDoc only reads them
  skipErrorChecking: true,
  // one page per package: the site builds in seconds, not one page per symbol
  outputFileStrategy: 'modules',
  entryFileName: 'index',
  // paths without `@kernelpack/` folders (Vite serves `/@…` paths itself), and text VitePress's Vue
  // compiler reads as text: brackets as entities, HTML in comments escaped
  excludeScopesInPaths: true,
  useHTMLEncodedBrackets: true,
  sanitizeComments: true,
  hidePageHeader: true,
  hideBreadcrumbs: true,
  disableSources: true,
  // members as tables, not a heading each: compact pages, quick to render and to index for search
  parametersFormat: 'table',
  interfacePropertiesFormat: 'table',
  classPropertiesFormat: 'table',
  typeDeclarationFormat: 'table',
  propertyMembersFormat: 'table',
  enumMembersFormat: 'table',
  indexFormat: 'table',
  sort: ['source-order'],
  excludeExternals: true,
  logLevel: 'Warn',
})
const project = await app.convert()
if (!project) {
  console.error('docs: TypeDoc could not read the entry points (see above)')
  process.exit(1)
}
await app.generateOutputs(project)
if (app.logger.hasErrors()) process.exit(1)
