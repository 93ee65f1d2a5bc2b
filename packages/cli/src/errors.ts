/** Bad command-line usage: exit status 2, message plus a pointer to `kernelpack help`. */
export class UsageError extends Error {
  override name = 'UsageError'
}

/** A user error (bad input file, failed compile…): exit status 1, the message names the file and the fix. */
export class UserError extends Error {
  override name = 'UserError'
}
