// uvu has no async throws: `await rejects(fn, check)` fails unless fn rejects with an error `check` accepts.
import * as assert from 'uvu/assert'

export async function rejects(fn: () => Promise<unknown>, check: (e: Error) => boolean): Promise<void> {
  let err: unknown
  try {
    await fn()
  } catch (e) {
    err = e
  }
  if (err === undefined) assert.unreachable('expected a rejection')
  assert.ok(check(err as Error), `unexpected error: ${(err as Error)?.stack ?? err}`)
}
