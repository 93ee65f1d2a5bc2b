declare module '*.vue' {
  import type { DefineComponent } from 'vue'
  const component: DefineComponent<object, object, unknown>
  export default component
}

// Vite's `?url` import of an asset (the gallery's picture): its URL in the built site
declare module '*.png?url' {
  const url: string
  export default url
}
