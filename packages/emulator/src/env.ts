// The emulator's environment variables (KERNELPACK_EMULATOR_*), read where there is a process (Node); a browser
// has no environment, and every variable reads as unset there.

/** The variable `name`, or undefined where it is unset or there is no environment. */
export function envVar(name: string): string | undefined {
  return (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env?.[name]
}
