export * from './host-refs.js'
export * from './emit-wrapper.js'
export * from './emit-loader.js'
export * from './emit-dts.js'
