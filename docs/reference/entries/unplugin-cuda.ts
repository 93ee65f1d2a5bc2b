/** @module unplugin-cuda */
export * from 'unplugin-cuda'
