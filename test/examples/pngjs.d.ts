// The part of pngjs (no bundled types) the example tests use.
declare module 'pngjs' {
  export class PNG {
    constructor(options: { width: number; height: number })
    width: number
    height: number
    data: Buffer
    static sync: { read(data: Buffer): PNG; write(png: PNG): Buffer }
  }
}
