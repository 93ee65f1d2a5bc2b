// The default theme, plus <KernelExample name="…" />: a gallery example that runs in the page.
import DefaultTheme from 'vitepress/theme'
import type { Theme } from 'vitepress'
import KernelExample from './KernelExample.vue'
import './style.css'

export default {
  extends: DefaultTheme,
  enhanceApp({ app }) {
    app.component('KernelExample', KernelExample)
  },
} satisfies Theme
