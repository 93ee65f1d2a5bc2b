// Shared memory in the arena (issue 26): the variant of a kernel for blocks whose shared memory exceeds what the
// adapter gives a workgroup (maxComputeWorkgroupStorageSize: 16 KiB by default, 32 KiB on SwiftShader, where
// CUDA gives up to 227 KiB). The kernel is written as usual, then its workgroup array kp_smem becomes a slice of
// the arena kp_mem, one per workgroup of the dispatch (the host side: arena-shared.ts):
// - each access `kp_smem[i]` reads `kp_mem[kp_sb + min(i, words - 1)]` (an index past the slice stays in it, as
//   WGSL clamps an index past a workgroup array);
// - each workgroupBarrier() is preceded by a storageBarrier(), which orders storage memory among the
//   workgroup's invocations as workgroupBarrier orders workgroup memory (WGSL §"Synchronization Built-in
//   Functions"); bar.red's count (workgroupUniformLoad) gets one where it is written (emit-collective.ts);
// - the slice is zeroed at the kernel's start, as WGSL zeroes workgroup memory.
// Slower than workgroup memory (every access goes to the storage buffer), but the same bits.

/** The kernel's first lines: its slice's first word (the slices' byte address at `workspace` in the
 *  parameter block, one slice of `words` words per workgroup of the dispatch), zeroed, then a barrier. */
export function arenaSliceStart(workspace: string, words: string, atomic: boolean): string[] {
  return [
    `  kp_sb = (${workspace} >> 2u) + (kp_wid.x + kp_nwg.x * (kp_wid.y + kp_nwg.y * kp_wid.z)) * (${words});`,
    `  for (var kp_z = kp_t; kp_z < ${words}; kp_z = kp_z + kp_nt) { ${atomic ? 'atomicStore(&kp_mem[kp_sb + kp_z], 0u);' : 'kp_mem[kp_sb + kp_z] = 0u;'} }`,
    '  storageBarrier();',
  ]
}

/** The module's text with kp_smem's accesses in the arena slice and a storage barrier at each workgroup
 *  barrier. */
export function sharedToArena(text: string, words: string): string {
  let out = ''
  let i = 0
  for (;;) {
    const j = text.indexOf('kp_smem[', i)
    if (j < 0) break
    let k = j + 'kp_smem['.length
    for (let depth = 1; depth > 0; k++) {
      if (k >= text.length) throw new Error('internal: an unclosed kp_smem index')
      if (text[k] === '[') depth++
      else if (text[k] === ']') depth--
    }
    const index = sharedToArena(text.slice(j + 'kp_smem['.length, k - 1), words)
    out += `${text.slice(i, j)}kp_mem[kp_sb + min(${index}, ${words} - 1u)]`
    i = k
  }
  out += text.slice(i)
  return out.replaceAll('workgroupBarrier();', 'storageBarrier(); workgroupBarrier();')
}
