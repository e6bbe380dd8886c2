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

/**
 * Thrown inside {@link PgRunner} when the caller's signal was aborted before the statement was
 * sent: the statement never reached the server. Never worth a retry.
 */
export class GivenUpError extends Error {
  constructor() {
    super('given up on by the caller before it was sent; it was not run');
    this.name = 'GivenUpError';
  }
}
