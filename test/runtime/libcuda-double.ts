// Builds the libcuda test double (test/fixtures/runtime/libcuda-test-double.c; see its README) with gcc into
// a temp dir and binds its kptd_* control/query functions through koffi, which shares the dlopen handle
// with the runtime's cuda backend, so both see the same state.
import { execFileSync } from 'node:child_process'
import { rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { fixturesDir, repoRoot, tempDir, tool } from '../helpers/tools.js'

export const doubleSource = join(fixturesDir, 'runtime', 'libcuda-test-double.c')

interface KoffiLike {
  load(path: string): { func(decl: string): (...args: unknown[]) => unknown }
}

/** koffi as the runtime package resolves it (it is not a root dependency). */
export const koffi = createRequire(join(repoRoot, 'packages', 'runtime', 'package.json'))('koffi') as KoffiLike

export interface TestDouble {
  path: string
  reset(): void
  log(): string
  clearLog(): void
  setDevice(major: number, minor: number, count?: number, driverVersion?: number): void
  fail(name: string, code: number): void
  procStatus(name: string, status: number): void
  defineKernel(name: string, sizes: number[]): void
  /** Declares a module-scope variable of `size` bytes (zeroed) that cuModuleGetGlobal finds. */
  defineGlobal(name: string, size: number): void
  setJitError(text: string): void
  logLaunches(on: boolean): void
  launchCount(): bigint
}

export function buildTestDouble(): TestDouble {
  const dir = tempDir('kp-libcuda-double-')
  process.on('exit', () => rmSync(dir, { recursive: true, force: true }))
  const path = join(dir, 'libcuda.so.1')
  execFileSync(tool('gcc'), ['-shared', '-fPIC', '-O2', '-Wall', '-Werror', '-o', path, doubleSource], { stdio: 'pipe' })
  const lib = koffi.load(path)
  const f = {
    reset: lib.func('void kptd_reset(void)'),
    log: lib.func('const char *kptd_log(void)'),
    clearLog: lib.func('void kptd_clear_log(void)'),
    setDevice: lib.func('void kptd_set_device(int major, int minor, int count, int driver)'),
    fail: lib.func('void kptd_fail(const char *name, int code)'),
    procStatus: lib.func('void kptd_proc_status(const char *name, int status)'),
    defineKernel: lib.func('void kptd_define_kernel(const char *name, int n, const uint64_t *sizes)'),
    defineGlobal: lib.func('void kptd_define_global(const char *name, size_t size)'),
    setJitError: lib.func('void kptd_set_jit_error(const char *text)'),
    logLaunches: lib.func('void kptd_log_launches(int on)'),
    launchCount: lib.func('uint64_t kptd_launch_count(void)'),
  }
  return {
    path,
    reset: () => void f.reset(),
    log: () => String(f.log()),
    clearLog: () => void f.clearLog(),
    setDevice: (major, minor, count = 1, driverVersion = 13000) => void f.setDevice(major, minor, count, driverVersion),
    fail: (name, code) => void f.fail(name, code),
    procStatus: (name, status) => void f.procStatus(name, status),
    defineKernel: (name, sizes) => void f.defineKernel(name, sizes.length, new BigUint64Array(sizes.map(BigInt))),
    defineGlobal: (name, size) => void f.defineGlobal(name, size),
    setJitError: (text) => void f.setJitError(text),
    logLaunches: (on) => void f.logLaunches(on ? 1 : 0),
    launchCount: () => BigInt(f.launchCount() as number | bigint),
  }
}
