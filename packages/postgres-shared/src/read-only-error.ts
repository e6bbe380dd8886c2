/**
 * The `cause` of the `BackendUnavailableError` a write gets from a server that only reads
 * (SQLSTATE `25006`, `read_only_sql_transaction`): a hot standby, or a session with
 * `default_transaction_read_only`. The write did not happen; the original error is its `cause`.
 */
export class ReadOnlyServerError extends Error {
  /** Always `25006`. */
  readonly code = '25006';

  constructor(cause: unknown) {
    super(
      'the server is read-only (SQLSTATE 25006): the pool reaches a hot standby or a read-only session; point it at the primary (see "Highly available deployments" in the adapter README)',
      { cause },
    );
    this.name = 'ReadOnlyServerError';
  }
}

/** `error` itself, or a {@link ReadOnlyServerError} around it when the server refused a write as read-only. */
export function explainServerError(error: unknown): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  return code === '25006' ? new ReadOnlyServerError(error) : error;
}
