// The text of a PTX image as it sits in an offload binary or a .ptx file: LLVM's tools and nvcc pad images
// with NUL bytes, which are not part of the text.

/** The PTX text of `bytes`, trailing NUL padding removed. */
export function ptxText(bytes: Uint8Array): string {
  let end = bytes.length
  while (end > 0 && bytes[end - 1] === 0) end--
  return new TextDecoder().decode(bytes.subarray(0, end))
}
