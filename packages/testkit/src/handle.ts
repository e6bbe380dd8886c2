import { FaultsUnsupportedError, ServerClosedError, ServerStateError } from './errors.js';
import type { ServerKind, ServerState, StopOptions, Strategy } from './types.js';

/** What a strategy must provide for the fault controls of a handle. */
export interface Lifecycle {
  stop(crash: boolean): Promise<void>;
  start(): Promise<void>;
  pause(): Promise<void>;
  resume(): Promise<void>;
  dropConnections(): Promise<void>;
  /** Kill and clean up; must not throw. */
  close(): Promise<void>;
  /** For servers the testkit does not manage: the error every fault throws. */
  readonly refuse?: (fault: string) => Error;
  /** Diagnostics (local strategy). */
  readonly pid?: number | undefined;
  readonly dir?: string | undefined;
}

/** Lifecycle of a server the testkit does not manage: every fault throws. */
export function externalLifecycle(kind: ServerKind, envVar: string): Lifecycle {
  const refuse = (fault: string) => new FaultsUnsupportedError(kind, fault, envVar);
  const reject = (fault: string) => () => Promise.reject(refuse(fault));
  return {
    stop: reject('stop'),
    start: reject('start'),
    pause: reject('pause'),
    resume: reject('resume'),
    dropConnections: reject('dropConnections'),
    close: () => Promise.resolve(),
    refuse,
  };
}

/**
 * Base of every server handle: state machine and serialisation of the faults around a
 * {@link Lifecycle}. Methods are bound, so `const { restart } = server` works.
 */
export class ServerHandle {
  readonly kind: ServerKind;
  readonly strategy: Strategy;
  readonly version: string;
  readonly #lifecycle: Lifecycle;
  #state: ServerState = 'running';
  #queue: Promise<unknown> = Promise.resolve();
  #closing: Promise<void> | undefined;

  constructor(kind: ServerKind, strategy: Strategy, version: string, lifecycle: Lifecycle) {
    this.kind = kind;
    this.strategy = strategy;
    this.version = version;
    this.#lifecycle = lifecycle;
  }

  get state(): ServerState {
    return this.#state;
  }

  get pid(): number | undefined {
    return this.#lifecycle.pid;
  }

  get dir(): string | undefined {
    return this.#lifecycle.dir;
  }

  readonly stop = (options: StopOptions = {}): Promise<void> =>
    this.#op('stop', async () => {
      if (this.#state === 'stopped') return;
      await this.#lifecycle.stop(options.crash ?? false);
      this.#state = 'stopped';
    });

  readonly start = (): Promise<void> =>
    this.#op('start', async () => {
      if (this.#state !== 'stopped') return;
      await this.#lifecycle.start();
      this.#state = 'running';
    });

  readonly restart = async (options: StopOptions = {}): Promise<void> => {
    if (this.#lifecycle.refuse && this.#state !== 'closed') throw this.#lifecycle.refuse('restart');
    await this.stop(options);
    await this.start();
  };

  readonly pause = (): Promise<void> =>
    this.#op('pause', async () => {
      if (this.#state === 'paused') return;
      if (this.#state === 'stopped') {
        throw new ServerStateError(`${this.kind}.pause(): the server is stopped; start() it first`);
      }
      await this.#lifecycle.pause();
      this.#state = 'paused';
    });

  readonly resume = (): Promise<void> =>
    this.#op('resume', async () => {
      if (this.#state !== 'paused') return;
      await this.#lifecycle.resume();
      this.#state = 'running';
    });

  readonly dropConnections = (): Promise<void> =>
    this.#op('dropConnections', async () => {
      if (this.#state !== 'running') {
        throw new ServerStateError(
          `${this.kind}.dropConnections(): the server is ${this.#state}; it must be running`,
        );
      }
      await this.#lifecycle.dropConnections();
    });

  /** Idempotent teardown; runs at once, even while another fault is in progress. */
  readonly close = (): Promise<void> => {
    this.#closing ??= (async () => {
      this.#state = 'closed';
      try {
        await this.#lifecycle.close();
      } catch {
        // close never throws
      }
    })();
    return this.#closing;
  };

  #op(name: string, fn: () => Promise<void>): Promise<void> {
    const run = async (): Promise<void> => {
      if (this.#state === 'closed') throw new ServerClosedError(this.kind, name);
      if (this.#lifecycle.refuse) throw this.#lifecycle.refuse(name);
      await fn();
    };
    const result = this.#queue.then(run, run);
    this.#queue = result.catch(() => {});
    return result;
  }
}
