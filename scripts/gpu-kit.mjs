// `pnpm gpu:kit` (issue 18): packs `pnpm test:gpu` and the GPU bench for a machine that has an NVIDIA GPU, its
// driver, nvcc and gcc, but not this repository's dependencies (no pnpm, no node_modules, maybe no Node): the
// device machines this project is sometimes lent receive the working tree plus at most 64 MiB of ignored
// folders. .gpu-kit/ (gitignored) then holds
//   test-gpu.mjs, bench-gpu.mjs  test/gpu/run.ts and bench/gpu.bench.ts bundled by esbuild (workspace packages from
//                                source), with `import.meta.dirname` of each bundled file mapped back into the repository
//   node_modules/koffi, node_modules/@koromix/koffi-linux-x64   the FFI, not bundled (a native module)
//   node_modules/webgpu          Dawn's WebGPU for Node (the optional `webgpu` package): index.js, package.json and
//                                the x86-64 Linux dawn.node, gzipped (dawn.node.gz, unpacked by the run script)
//   node.xz                      this machine's Node (official build, glibc >= 2.28), used when the GPU machine has none
//                                (xz, or Python's lzma where the machine has no xz)
//   kernels-prebuilt.json.gz     the kernel corpus's nvcc PTX (test/gpu/prebuilt.ts), used while its sources match
//   cache/                       the suite's PTX cache and cubin cache (compile time saved there: a self-test run
//                                with the test double at the GPU's compute capability fills the cubins)
//   example/                     examples/webpack-node as `pnpm demo` built it, the runtime bundled in (if built)
//   run-on-gpu.sh                the one command: test:gpu, the bench, the example; copies the report, the bench
//                                results, the example's output and the recorded fixtures (a .tgz) to $OUT
// On the GPU machine, from the repository root: `sh .gpu-kit/run-on-gpu.sh` (arguments go to test:gpu).
// Options: --out DIR (default .gpu-kit), --no-node, --no-cache; --bundle-only FILE (test:gpu's bundle alone).
import { build } from 'esbuild'
import { execFileSync } from 'node:child_process'
import { chmodSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { gzipSync } from 'node:zlib'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
// --out DIR (default .gpu-kit), --no-node, --no-cache: test/gpu/kit.test.ts builds a lean kit elsewhere
const args = process.argv.slice(2)
const kit = args.includes('--out') ? resolve(args[args.indexOf('--out') + 1]) : join(root, '.gpu-kit')
const bundleOnly = args.includes('--bundle-only') ? resolve(args[args.indexOf('--bundle-only') + 1]) : undefined
if (!bundleOnly) {
  rmSync(kit, { recursive: true, force: true })
  mkdirSync(kit, { recursive: true })
}

// Each bundled module's `import.meta.dirname` becomes its folder under the repository root, found at run time
// beside the bundle (KP_REPO_ROOT overrides).
const dirnamePlugin = {
  name: 'kernelpack-dirname',
  setup(b) {
    b.onLoad({ filter: /\.ts$/ }, (args) => {
      if (args.path.includes(`${'node_modules'}`)) return undefined
      const text = readFileSync(args.path, 'utf8')
      if (!text.includes('import.meta.dirname')) return undefined
      const rel = relative(root, dirname(args.path)).split('\\').join('/')
      return { contents: text.replaceAll('import.meta.dirname', `__kpDirname(${JSON.stringify(rel)})`), loader: 'ts' }
    })
  },
}
const banner = [
  "import { createRequire as __kpCreateRequire } from 'node:module';",
  "import { fileURLToPath as __kpFileURLToPath } from 'node:url';",
  "import { join as __kpJoin } from 'node:path';",
  "const require = __kpCreateRequire(import.meta.url);",
  "const __kpRoot = process.env.KP_REPO_ROOT ?? __kpFileURLToPath(new URL('..', import.meta.url));",
  'const __kpDirname = (rel) => __kpJoin(__kpRoot, rel);',
].join('\n')
const common = {
  bundle: true, platform: 'node', format: 'esm', target: 'node20', conditions: ['source'], logLevel: 'warning',
  external: ['koffi', 'webgpu'], banner: { js: banner }, plugins: [dirnamePlugin], legalComments: 'none',
}
// --bundle-only FILE: test:gpu's bundle alone, for the suite (test/gpu/test-gpu.test.ts runs it where bare
// imports resolve from packages/runtime/node_modules: one Node start per section instead of tsx compiling
// the sources in each)
if (bundleOnly) {
  await build({ ...common, entryPoints: [join(root, 'test', 'gpu', 'run.ts')], outfile: bundleOnly })
  process.exit(0)
}
await build({ ...common, entryPoints: [join(root, 'test', 'gpu', 'run.ts')], outfile: join(kit, 'test-gpu.mjs') })
await build({
  ...common,
  stdin: {
    contents: [
      "import { run } from './bench/gpu.bench.ts'",
      "import { printResults, writeResults } from './bench/lib.ts'",
      'const results = await run()',
      'printResults(results)',
      "writeResults(process.argv[2] ?? 'bench/results.json', results)",
    ].join('\n'),
    resolveDir: root, loader: 'ts', sourcefile: 'bench-gpu-entry.ts',
  },
  outfile: join(kit, 'bench-gpu.mjs'),
})

// the README's main job as a user gets it: examples/webpack-node as `pnpm demo` built it (unplugin-cuda through
// webpack: the loader stub, the offload binary with cubin sm_80 and PTX compute_80), with @kernelpack/runtime
// bundled in; on an sm_90 GPU the runtime must choose the PTX and the driver JIT-compiles it
const example = join(root, 'examples', 'webpack-node', 'dist')
if (existsSync(join(example, 'main.mjs'))) {
  await build({
    entryPoints: [join(example, 'main.mjs')], bundle: true, platform: 'node', format: 'esm', target: 'node20', conditions: ['source'],
    logLevel: 'warning', external: ['koffi', 'webgpu'], legalComments: 'none', outfile: join(kit, 'example', 'main.mjs'),
    banner: { js: "import { createRequire as __kpCreateRequire } from 'node:module'; const require = __kpCreateRequire(import.meta.url);" },
  })
  for (const f of readdirSync(example).filter((x) => x.endsWith('.offload'))) cpSync(join(example, f), join(kit, 'example', f))
} else console.warn('gpu:kit: examples/webpack-node/dist is not built (run `pnpm demo` first): the kit runs no example')

// koffi and its x86-64 Linux binary (the device machines are x86-64), copied out of pnpm's store
const req = createRequire(join(root, 'packages', 'runtime', 'package.json'))
const koffiDir = realpathSync(dirname(req.resolve('koffi'))) // koffi/index.cjs (its package.json is not exported)
cpSync(koffiDir, join(kit, 'node_modules', 'koffi'), { recursive: true, dereference: true })
const nativeDir = realpathSync(join(koffiDir, '..', '@koromix', 'koffi-linux-x64'))
cpSync(nativeDir, join(kit, 'node_modules', '@koromix', 'koffi-linux-x64'), { recursive: true, dereference: true })

// Dawn (the optional `webgpu` package): the WebGPU section and bench figures on the GPU's own adapter
const webgpuDir = (() => {
  try { return realpathSync(dirname(createRequire(join(root, 'package.json')).resolve('webgpu'))) } catch { return undefined }
})()
if (webgpuDir && existsSync(join(webgpuDir, 'dist', 'linux-x64', 'dawn.node'))) {
  const to = join(kit, 'node_modules', 'webgpu')
  mkdirSync(join(to, 'dist', 'linux-x64'), { recursive: true })
  for (const f of ['index.js', 'package.json', 'LICENSE.md']) if (existsSync(join(webgpuDir, f))) cpSync(join(webgpuDir, f), join(to, f))
  writeFileSync(join(to, 'dist', 'linux-x64', 'dawn.node.gz'), gzipSync(readFileSync(join(webgpuDir, 'dist', 'linux-x64', 'dawn.node')), { level: 6 }))
} else console.warn('gpu:kit: the optional `webgpu` package is not installed: the kit runs no WebGPU section')

// Node itself, compressed (xz: the smallest; the working tree and the kit travel in 64 MiB), for a machine without it
if (!args.includes('--no-node')) {
  writeFileSync(join(kit, 'node.xz'), execFileSync('xz', ['-9', '-T2', '-c', process.execPath], { maxBuffer: 256 << 20 }))
  writeFileSync(join(kit, 'node.version'), process.version + '\n')
}

// the build caches: a GPU run then compiles only what changed since. The kernel corpus travels as its PTX
// (test/gpu/prebuilt.ts, written by test/gpu/write-prebuilt.ts), not as the suite's build cache (clang's builds and stale entries too: too large)
if (!args.includes('--no-cache')) {
  execFileSync(process.execPath, ['--conditions=source', '--import', 'tsx', join(root, 'test', 'gpu', 'write-prebuilt.ts'), join(kit, 'kernels-prebuilt.json.gz')], { cwd: root, stdio: 'inherit' })
}
for (const c of args.includes('--no-cache') ? [] : ['ptx-cache', 'gpu-cache']) {
  const from = join(root, 'test', '.out', c)
  if (existsSync(from)) cpSync(from, join(kit, 'cache', c), { recursive: true, filter: (p) => !/\.(lock|tmp)$/.test(p) })
}

const script = `#!/bin/sh
# Runs \`pnpm test:gpu\`, the GPU bench and the example from the bundles of \`pnpm gpu:kit\` (scripts/gpu-kit.mjs), on a machine
# with an NVIDIA GPU, its driver, nvcc and gcc. From the repository root: sh .gpu-kit/run-on-gpu.sh [test:gpu options]
# Writes to \\$OUT (default .gpu-kit/out): test-gpu.log, report.md, report.json, bench-gpu.log, bench-results.json,
# example.log and gpu-recorded.tgz (test/fixtures/gpu-recorded: unpack it at the repository root and commit it).
set -u
cd "$(dirname "$0")/.." || exit 1
KIT=.gpu-kit
OUT="\${OUT:-$KIT/out}"
mkdir -p "$OUT"
if command -v node >/dev/null 2>&1 && node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 20 || (a === 20 && b >= 19) ? 0 : 1)'; then
  NODE=node
else
  NODE=/tmp/kp-node
  if command -v xz >/dev/null 2>&1; then xz -dc "$KIT/node.xz" > "$NODE"
  else python3 -c 'import lzma, sys; sys.stdout.buffer.write(lzma.open(sys.argv[1]).read())' "$KIT/node.xz" > "$NODE"; fi
  chmod +x "$NODE" && "$NODE" --version >/dev/null || exit 1
fi
DAWN="$KIT/node_modules/webgpu/dist/linux-x64/dawn.node"
if [ -f "$DAWN.gz" ] && [ ! -f "$DAWN" ]; then gunzip -c "$DAWN.gz" > "$DAWN"; fi
# Dawn needs a Vulkan loader (libvulkan.so.1) and the NVIDIA driver's ICD; say what there is
if [ -z "\${VK_ICD_FILENAMES:-}\${VK_DRIVER_FILES:-}" ]; then
  for icd in /usr/share/vulkan/icd.d/nvidia_icd.json /etc/vulkan/icd.d/nvidia_icd.json /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json; do
    if [ -f "$icd" ]; then export VK_DRIVER_FILES="$icd"; break; fi
  done
fi
echo "vulkan: loader $(ldconfig -p 2>/dev/null | grep -o '/[^ ]*libvulkan.so.1' | head -n 1 || echo missing); ICD \${VK_DRIVER_FILES:-\${VK_ICD_FILENAMES:-default search}}"
# the NVIDIA ICD (libGLX_nvidia.so.0) needs glvnd's libGLdispatch: without it Dawn finds no driver (seen on an H200 machine)
ldconfig -p 2>/dev/null | grep -q 'libGLdispatch.so.0' || echo "vulkan: no libGLdispatch.so.0 (glvnd): the NVIDIA ICD will not load and WebGPU will find no adapter; install libglvnd0 (with libvulkan1, libgl1, libglx0, libegl1)"
command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader
echo "node: $("$NODE" --version) ($NODE); nvcc: $(command -v nvcc || ls /usr/local/cuda/bin/nvcc 2>/dev/null || echo missing)"
export KP_REPO_ROOT="$PWD"
if [ -f "$KIT/kernels-prebuilt.json.gz" ]; then export KP_GPU_PREBUILT="$PWD/$KIT/kernels-prebuilt.json.gz"; fi
mkdir -p test/.out
for c in ptx-cache gpu-cache; do
  if [ -d "$KIT/cache/$c" ] && [ ! -d "test/.out/$c" ]; then cp -r "$KIT/cache/$c" "test/.out/$c"; fi
done
# a device command may run 10 minutes: sections stop at 4 (a hung case at 1), so the report is always written
"$NODE" "$KIT/test-gpu.mjs" --timeout-s 240 --case-timeout-s 60 "$@" > "$OUT/test-gpu.log" 2>&1
status=$?
cat "$OUT/test-gpu.log" | tail -n 400
cp test/.out/gpu-report/report.md test/.out/gpu-report/report.json "$OUT/" 2>/dev/null
"$NODE" "$KIT/bench-gpu.mjs" "$OUT/bench-results.json" > "$OUT/bench-gpu.log" 2>&1 || echo "bench failed (see bench-gpu.log)"
cat "$OUT/bench-gpu.log" | tail -n 40
if [ -f "$KIT/example/main.mjs" ]; then
  echo "example (examples/webpack-node as pnpm demo built it):"
  "$NODE" "$KIT/example/main.mjs" > "$OUT/example.log" 2>&1 || echo "example failed (see example.log)"
  echo "--- the same without the driver (auto: WebGPU on a hardware adapter, else the emulator):" >> "$OUT/example.log"
  KERNELPACK_LIBCUDA=/nonexistent/libcuda.so.1 "$NODE" "$KIT/example/main.mjs" >> "$OUT/example.log" 2>&1 || echo "example without the driver failed (see example.log)"
  cat "$OUT/example.log"
fi
if [ -d test/fixtures/gpu-recorded ]; then tar czf "$OUT/gpu-recorded.tgz" test/fixtures/gpu-recorded; fi
echo "test:gpu exit status: $status"
exit $status
`
writeFileSync(join(kit, 'run-on-gpu.sh'), script)
chmodSync(join(kit, 'run-on-gpu.sh'), 0o755)

const size = (p) => (statSync(p).isDirectory() ? Number(execFileSync('du', ['-sb', p], { encoding: 'utf8' }).split('\t')[0]) : statSync(p).size)
const total = size(kit)
const mib = (p) => (existsSync(p) ? `${(size(p) / 2 ** 20).toFixed(1)} MiB` : 'none')
console.log(`wrote ${kit} (${(total / 2 ** 20).toFixed(1)} MiB): test-gpu.mjs ${mib(join(kit, 'test-gpu.mjs'))}, bench-gpu.mjs ${mib(join(kit, 'bench-gpu.mjs'))}, ` +
  `node.xz ${mib(join(kit, 'node.xz'))} (${process.version}), webgpu ${mib(join(kit, 'node_modules', 'webgpu'))}, caches ${mib(join(kit, 'cache'))}, kernel-corpus PTX ${mib(join(kit, 'kernels-prebuilt.json.gz'))}`)
if (total > 56 * 2 ** 20) console.warn('gpu:kit: over 56 MiB; with the working tree it may pass the 64 MiB a device call carries')
