// The default translator object (emit-wgsl) without the translator itself: `translate` imports emit-wgsl.ts
// when it is first called, so a bundle that runs only WGSL translated at build time (wgsl-image.ts) never
// loads the code generator or the PTX front end (issue 25).
import type { TranslateInput, TranslateTarget, WgslModule, WgslTranslator } from './translate.js'

/** The PTX→WGSL translator (emit-wgsl.ts), loaded on first use. */
export const emitWgsl: WgslTranslator = {
  name: 'emit-wgsl',
  async translate(input: TranslateInput, target: TranslateTarget): Promise<WgslModule> {
    const { translateModule } = await import('./emit-wgsl.js')
    return translateModule(input.module, target, input.ptx)
  },
}
