/**
 * Thrown inside {@link PgRunner} when an operation's deadline passes; it becomes the `cause` of
 * the `BackendUnavailableError` the caller sees. Never worth a retry.
 */
export class DeadlineError extends Error {
  constructor(what: string, ms: number) {
    super(`${what} did not finish within ${ms} ms (statementTimeoutMs)`);
    this.name = 'DeadlineError';
  }
}
