/** Stable codes of the errors the testkit throws. */
export type TestkitErrorCode =
  | 'FAULTS_UNSUPPORTED'
  | 'INVALID_OPTION'
  | 'SERVER_NOT_INSTALLED'
  | 'SERVER_START_FAILED'
  | 'SERVER_CLOSED'
  | 'SERVER_STATE'
  | 'WAIT_TIMEOUT';

/** Base class of every testkit error: a stable `code` plus the usual `message` and `cause`. */
export class TestkitError extends Error {
  /** Stable upper-case code, e.g. `FAULTS_UNSUPPORTED`. */
  readonly code: TestkitErrorCode;

  constructor(code: TestkitErrorCode, message: string, options: { cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
  }
}

/**
 * A fault (`stop`, `pause`, `dropConnections`, ...) was asked of a server the testkit does not
 * manage: one named by `FLEETCRON_TEST_*` environment variables. Start a managed server instead,
 * e.g. `startRedis({ strategy: 'managed' })`.
 */
export class FaultsUnsupportedError extends TestkitError {
  /** The fault that was asked for, e.g. `restart`. */
  readonly fault: string;

  constructor(kind: string, fault: string, envVar: string) {
    super(
      'FAULTS_UNSUPPORTED',
      `${kind}.${fault}(): faults need a managed server, but this ${kind} server comes from ${envVar}. Start a dedicated server with start${kind[0]?.toUpperCase()}${kind.slice(1)}({ strategy: 'managed' }) for fault tests.`,
    );
    this.fault = fault;
  }
}

/** No way to run the server: no env var, no container runtime and no local binary. */
export class ServerNotInstalledError extends TestkitError {
  constructor(message: string) {
    super('SERVER_NOT_INSTALLED', message);
  }
}

/** The server process exited or did not become ready in time. `output` holds its last log lines. */
export class ServerStartError extends TestkitError {
  /** The last lines the server wrote to stdout/stderr. */
  readonly output: string;

  constructor(message: string, output: string, options: { cause?: unknown } = {}) {
    super(
      'SERVER_START_FAILED',
      output ? `${message}\n--- last server output ---\n${output}` : message,
      options,
    );
    this.output = output;
  }
}

/** A fault was called on a server handle after `close()`. */
export class ServerClosedError extends TestkitError {
  constructor(kind: string, operation: string) {
    super('SERVER_CLOSED', `${kind}.${operation}(): the server was closed`);
  }
}

/** A fault that does not fit the server's current state, e.g. `pause()` on a stopped server. */
export class ServerStateError extends TestkitError {
  constructor(message: string) {
    super('SERVER_STATE', message);
  }
}

/** {@link waitFor} reached its deadline. `cause` is the condition's last error, if it threw. */
export class WaitTimeoutError extends TestkitError {
  constructor(message: string, cause?: unknown) {
    super('WAIT_TIMEOUT', message, { cause });
  }
}

/** An argument or option given to a testkit helper is not one it accepts; the message says the fix. */
export class InvalidOptionError extends TestkitError {
  /** The argument or option that was wrong, e.g. `upstreamUrl`. */
  readonly option: string;

  constructor(option: string, message: string) {
    super('INVALID_OPTION', `${option}: ${message}`);
    this.option = option;
  }
}
