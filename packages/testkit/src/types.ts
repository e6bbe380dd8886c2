/** The servers the testkit can start. */
export type ServerKind = 'postgres' | 'redis' | 'etcd';

/**
 * How a server was obtained: `external` (named by a `FLEETCRON_TEST_*` env var; no faults),
 * `container` (Testcontainers), or `local` (a local binary run in a temp dir).
 */
export type Strategy = 'external' | 'container' | 'local';

/**
 * Which strategy to use. `auto` (default): env var, else container, else local binary.
 * `managed`: like `auto` but ignores the env var, so faults always work (use it in fault tests).
 * `external` / `container` / `local`: only that one, or throw.
 * The env var `FLEETCRON_TESTKIT_STRATEGY` sets the default for every call.
 */
export type StrategyPreference = 'auto' | 'managed' | Strategy;

/** Options shared by every `start*` function. */
export interface StartOptions {
  /** Which strategy to use; see {@link StrategyPreference}. Default `auto`. */
  strategy?: StrategyPreference;
  /** Startup deadline in ms (per start, also for `start()`/`restart()`). Default 30 000. */
  startTimeoutMs?: number;
}

/** Options of `stop()` and `restart()`. */
export interface StopOptions {
  /**
   * `true`: kill the server at once (SIGKILL of the whole process group, `docker kill`), like a
   * crash. Default `false`: a clean shutdown (postgres fast shutdown, SIGTERM for redis and etcd).
   */
  crash?: boolean;
}

/** Lifecycle state of a server handle. */
export type ServerState = 'running' | 'paused' | 'stopped' | 'closed';

/**
 * Fault controls present on every server handle. Calls are serialised per handle. On a server from
 * an env var every fault except `close()` throws `FaultsUnsupportedError`.
 */
export interface ServerFaults {
  /** Current lifecycle state. */
  readonly state: ServerState;
  /** Stops the server; the port and the data directory are kept. No-op when already stopped. */
  stop(options?: StopOptions): Promise<void>;
  /** Starts a stopped server again on the same port with the same data. No-op when running. */
  start(): Promise<void>;
  /** `stop(options)` then `start()`. */
  restart(options?: StopOptions): Promise<void>;
  /**
   * Freezes the server: SIGSTOP to its whole process group (postgres backends included), or
   * `docker pause`. Connections stay open but nothing answers. Resolves once every process is stopped.
   */
  pause(): Promise<void>;
  /** Undoes {@link ServerFaults.pause}. No-op when not paused. */
  resume(): Promise<void>;
  /**
   * Closes every client connection from the server side: postgres `pg_terminate_backend` of all
   * other client backends, redis `CLIENT KILL TYPE normal` and `TYPE pubsub`, etcd a restart
   * (it has no such command). Clients see a dropped connection and may reconnect.
   */
  dropConnections(): Promise<void>;
  /** Tears the server down: kills it and removes its temp dir. Idempotent; never throws. */
  close(): Promise<void>;
}

/** Fields shared by every server handle. */
export interface ServerInfo {
  /** Which server this is. */
  readonly kind: ServerKind;
  /** How it was obtained. */
  readonly strategy: Strategy;
  /** Server version, e.g. `15.10`, `7.0.15`, `3.4.23`; `unknown` when it cannot be read. */
  readonly version: string;
  /** Diagnostics for local servers: pid (= process group id) of the server process, else undefined. */
  readonly pid: number | undefined;
  /** Diagnostics for local servers: the temp dir holding the data, else undefined. */
  readonly dir: string | undefined;
}

/** A PostgreSQL server. */
export interface PostgresServer extends ServerInfo, ServerFaults {
  readonly kind: 'postgres';
  /** `postgres://postgres@127.0.0.1:PORT/postgres` (superuser, database `postgres`). */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  /**
   * Creates a database (default name: a unique `t_...` name) and returns its URL.
   * Needs the `pg` package.
   */
  createDatabase(name?: string): Promise<string>;
}

/** A Redis server. */
export interface RedisServer extends ServerInfo, ServerFaults {
  readonly kind: 'redis';
  /** `redis://127.0.0.1:PORT`. */
  readonly url: string;
  readonly host: string;
  readonly port: number;
}

/** A single-node etcd server. */
export interface EtcdServer extends ServerInfo, ServerFaults {
  readonly kind: 'etcd';
  /** Client endpoints, e.g. `['http://127.0.0.1:PORT']`. */
  readonly endpoints: string[];
}

/** Any server handle. */
export type TestServer = PostgresServer | RedisServer | EtcdServer;
