/** @module unplugin-cuda/node */
export * from 'unplugin-cuda/node'
