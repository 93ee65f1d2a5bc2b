// Server-side rendering with a kernel: multiplies two matrices with matmul.cu (GPU or emulator), checks the
// product against JS, and renders it as an HTML table (printed; a real server would send it).
import { matmul, module } from './matmul.cu'

export async function render(n: number): Promise<{ html: string; c: Int32Array }> {
  const a = Int32Array.from({ length: n * n }, (_, i) => (i % 7) - 3)
  const b = Int32Array.from({ length: n * n }, (_, i) => (i % 5) - 2)
  const [da, db, dc] = await Promise.all([module.upload(a), module.upload(b), module.alloc(n * n * 4)])
  await matmul({ grid: [Math.ceil(n / 8), Math.ceil(n / 8)], block: [8, 8] }, da, db, dc, n)
  const c = await dc.download(new Int32Array(n * n))
  for (let r = 0; r < n; r++) {
    for (let col = 0; col < n; col++) {
      let sum = 0
      for (let k = 0; k < n; k++) sum += a[r * n + k]! * b[k * n + col]!
      if (c[r * n + col] !== sum) throw new Error(`matmul: wrong C[${r}][${col}] = ${c[r * n + col]} (expected ${sum})`)
    }
  }
  const rows = Array.from({ length: n }, (_, r) => `<tr>${Array.from(c.subarray(r * n, r * n + n), (v) => `<td>${v}</td>`).join('')}</tr>`)
  const loaded = await module.load()
  return { html: `<table data-backend="${loaded.backend.name}">\n${rows.join('\n')}\n</table>`, c }
}

const n = 24
try {
  const { html, c } = await render(n)
  const loaded = await module.load()
  console.log(`backend: ${loaded.backend.name} (${loaded.backend.reason})`)
  console.log(`images: ${module.images.map((i) => i.target).join(', ')}; ran ${loaded.image.kind} ${loaded.image.arch}`)
  console.log(html.split('\n').slice(0, 2).join('\n') + '\n…')
  console.log(`matmul: ${n}x${n} product OK, trace = ${Array.from({ length: n }, (_, i) => c[i * n + i]!).reduce((s, v) => s + v, 0)}`)
} catch (err) {
  console.error((err as Error).message)
  process.exit(1)
}
