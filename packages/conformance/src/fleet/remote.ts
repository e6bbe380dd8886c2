import {
  BackendUnavailableError,
  type ClaimRequest,
  type Lock,
  type LockCapabilities,
  type Store,
} from '@fleetcron/core';

/**
 * A lock and a store used from a child process through its IPC channel: the child's scheduler
 * calls them, the parent runs each call on its own client of the backend and sends the answer
 * back. So a child can run on any backend a fixture can make, and a SIGSTOPped child freezes
 * like a real holder: it sends nothing (no renewal, no release) and sees every answer late.
 */

/** A call from the child. */
interface CallMessage {
  t: 'call';
  id: number;
  target: 'lock' | 'store';
  method: string;
  args: unknown[];
}

/** The parent's answer to a {@link CallMessage}. */
interface ReplyMessage {
  t: 'reply';
  id: number;
  ok: boolean;
  value?: unknown;
  error?: { code: string | null; message: string };
}

/** What the child needs to know about the parent's lock up front. */
export interface RemoteLockInfo {
  backend: string;
  capabilities: LockCapabilities;
  windowMs: number;
  /** Methods beyond claim/extend/release/inspect the lock has (e.g. `withdraw`): forwarded too. */
  extraMethods: string[];
}

/** What the child needs to know about the parent's store up front. */
export interface RemoteStoreInfo {
  backend: string;
  /** Optional store methods the store has (the fleet-control ones): forwarded too. */
  extraMethods: string[];
}

/** Lock methods the child builds itself (`close` stays with the parent's client). */
const BASE_LOCK_METHODS = new Set(['claim', 'extend', 'release', 'inspect', 'close']);
/** The optional store methods forwarded when the parent's store has them (fleet control). */
const FLEET_STORE_METHODS = [
  'heartbeat',
  'instances',
  'leave',
  'requestRun',
  'takeRunRequests',
  'decideRunRequest',
  'releaseRunRequest',
  'getRunRequest',
  'listJobs',
  'watchRunRequests',
] as const;

/** Names of the function members of `target` (own and inherited, as on a class instance). */
export function methodNames(target: object): string[] {
  const names = new Set<string>();
  for (let o: object | null = target; o && o !== Object.prototype; o = Object.getPrototypeOf(o)) {
    for (const name of Object.getOwnPropertyNames(o)) {
      if (name === 'constructor' || name.startsWith('_')) continue;
      if (typeof (target as Record<string, unknown>)[name] === 'function') names.add(name);
    }
  }
  return [...names].sort();
}

/** Describes `lock` for {@link remoteLock}. */
export function remoteLockInfo(lock: Lock): RemoteLockInfo {
  const { backend, capabilities, windowMs } = lock;
  const extraMethods = methodNames(lock).filter((name) => !BASE_LOCK_METHODS.has(name));
  return { backend, capabilities, windowMs, extraMethods };
}

/** Describes `store` for {@link remoteStore}. */
export function remoteStoreInfo(store: Store): RemoteStoreInfo {
  const methods = new Set(methodNames(store));
  const extraMethods = FLEET_STORE_METHODS.filter((name) => methods.has(name));
  return { backend: store.backend, extraMethods };
}

/** Store method whose listener cannot cross IPC: the parent subscribes and pushes the jobs. */
const WATCH = 'watchRunRequests';

/** A run request the parent's store announced to a child's watcher. */
interface PushMessage {
  t: 'push';
  watch: number;
  job: string;
}

/** Something with a Node IPC channel: a `ChildProcess` in the parent, `process` in the child. */
interface Channel {
  send?(
    message: unknown,
    sendHandle?: undefined,
    options?: undefined,
    callback?: (error: Error | null) => void,
  ): boolean;
  on(event: 'message', listener: (message: unknown) => void): unknown;
  off(event: 'message', listener: (message: unknown) => void): unknown;
}

const isCall = (m: unknown): m is CallMessage => (m as CallMessage | null)?.t === 'call';
const isReply = (m: unknown): m is ReplyMessage => (m as ReplyMessage | null)?.t === 'reply';
const isPush = (m: unknown): m is PushMessage => (m as PushMessage | null)?.t === 'push';

/**
 * Parent side: answers the child's lock and store calls with `lock` (`null`: the child has no
 * lock) and `store` (`null`: the child has no store). Returns a function that stops answering
 * (and ends the child's watches).
 */
export function serveBackend(child: Channel, lock: Lock | null, store: Store | null): () => void {
  const targets = { lock, store } as unknown as Record<
    string,
    Record<string, (...args: unknown[]) => Promise<unknown>>
  >;
  const send = (message: unknown) => {
    try {
      child.send?.(message);
    } catch {
      // the child is gone; nobody waits for the message
    }
  };
  const watches = new Map<number, () => void>();
  /** `watchRunRequests` (the listener stays here and pushes) and its `unwatch` counterpart. */
  const watchCall = (method: string, args: unknown[]): unknown => {
    const watch = Number(args[0]);
    if (method === 'unwatch') {
      watches.get(watch)?.();
      watches.delete(watch);
      return null;
    }
    if (typeof store?.watchRunRequests !== 'function') throw new Error(`no store.${WATCH}`);
    const push = (job: string) => send({ t: 'push', watch, job } satisfies PushMessage);
    watches.set(watch, store.watchRunRequests(push));
    return null;
  };
  const onMessage = (message: unknown) => {
    if (!isCall(message)) return;
    const { id, target, method, args } = message;
    const reply = (m: Omit<ReplyMessage, 't' | 'id'>) => send({ t: 'reply', id, ...m });
    Promise.resolve()
      .then(() => {
        if (target === 'store' && (method === WATCH || method === 'unwatch')) {
          return watchCall(method, args);
        }
        const fn = targets[target]?.[method];
        if (typeof fn !== 'function') throw new Error(`no ${target}.${method}`);
        return fn.apply(targets[target], args);
      })
      .then(
        (value) => reply({ ok: true, value }),
        (error: unknown) => {
          const code = (error as { code?: unknown } | null)?.code;
          const text = error instanceof Error ? error.message : String(error);
          reply({
            ok: false,
            error: { code: typeof code === 'string' ? code : null, message: text },
          });
        },
      );
  };
  child.on('message', onMessage);
  return () => {
    child.off('message', onMessage);
    for (const unwatch of watches.values()) unwatch();
    watches.clear();
  };
}

/**
 * Child side: sends calls to the parent and matches the answers. One per child process (the
 * call ids are unique per channel), shared by its remote lock and store.
 */
export class ParentChannel {
  private nextId = 1;
  private nextWatch = 1;
  private readonly watchers = new Map<number, (job: string) => void>();
  private readonly pending = new Map<
    number,
    { resolve: (v: unknown) => void; reject: (e: unknown) => void }
  >();

  /** Starts listening for answers on `channel` (`process` in the child). */
  constructor(
    private readonly channel: Channel,
    private readonly backend: string,
  ) {
    channel.on('message', (message) => {
      if (isPush(message)) {
        this.watchers.get(message.watch)?.(message.job);
        return;
      }
      if (!isReply(message)) return;
      const waiter = this.pending.get(message.id);
      if (!waiter) return;
      this.pending.delete(message.id);
      if (message.ok) waiter.resolve(message.value);
      else waiter.reject(this.toError(message.error, message.id));
    });
  }

  /** Runs `target.method(...args)` in the parent. */
  call<T>(target: 'lock' | 'store', method: string, args: unknown[]): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      const fail = (cause: Error) => {
        if (!this.pending.delete(id)) return;
        reject(new BackendUnavailableError(this.backend, method, cause));
      };
      // `send` answers false also when the message is only queued behind a backlog (a large
      // heartbeat): it still goes out, and the parent runs it. Only a send that failed (the
      // callback's error) or no channel at all fails the call.
      const message = { t: 'call', id, target, method, args } satisfies CallMessage;
      if (this.channel.send === undefined) fail(new Error('no IPC channel'));
      else this.channel.send(message, undefined, undefined, (error) => error && fail(error));
    });
  }

  /**
   * The store's `watchRunRequests` across the channel: the parent subscribes and pushes each job
   * here. Returns the unsubscribe function.
   */
  watch(listener: (job: string) => void): () => void {
    const watch = this.nextWatch++;
    this.watchers.set(watch, listener);
    this.call('store', WATCH, [watch]).catch(() => this.watchers.delete(watch));
    return () => {
      if (!this.watchers.delete(watch)) return;
      this.call('store', 'unwatch', [watch]).catch(() => {});
    };
  }

  private toError(error: ReplyMessage['error'], id: number): Error {
    const message = error?.message ?? `call ${id} failed`;
    if (error?.code === 'BACKEND_UNAVAILABLE') {
      return new BackendUnavailableError(this.backend, 'remote call', new Error(message));
    }
    const copy = new Error(message) as Error & { code?: string };
    if (error?.code) copy.code = error.code; // typed codes (UNKNOWN_JOB, …) stay recognisable
    return copy;
  }
}

/** Child side: a lock whose calls run in the parent (see {@link serveBackend}). */
export function remoteLock(parent: ParentChannel, info: RemoteLockInfo): Lock {
  const lock: Lock = {
    backend: info.backend,
    capabilities: info.capabilities,
    windowMs: info.windowMs,
    claim({ signal, ...request }: ClaimRequest) {
      if (signal?.aborted) {
        // given up before it was sent: never send it (the contract of ClaimRequest.signal)
        const error = new BackendUnavailableError(info.backend, 'claim', signal.reason);
        return Promise.reject(error);
      }
      return parent.call('lock', 'claim', [request]);
    },
    extend: (lease, leaseMs) => parent.call('lock', 'extend', [lease, leaseMs]),
    release: (lease) => parent.call('lock', 'release', [lease]),
    inspect: (key) => parent.call('lock', 'inspect', [key]),
  };
  const extra = lock as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
  for (const method of info.extraMethods) {
    extra[method] = (...args: unknown[]) => {
      // A batched call's last argument may be `BatchOptions`: its AbortSignal cannot cross IPC.
      // Honour it here (never send once aborted) and send the call without it.
      const last = args.at(-1) as { signal?: AbortSignal } | undefined;
      if (last instanceof Object && 'signal' in last && !Array.isArray(last)) {
        if (last.signal?.aborted) {
          return Promise.reject(
            new BackendUnavailableError(info.backend, method, last.signal.reason),
          );
        }
        return parent.call('lock', method, args.slice(0, -1));
      }
      return parent.call('lock', method, args);
    };
  }
  return lock;
}

/**
 * Child side: a store whose calls run in the parent (see {@link serveBackend}), fleet-control
 * methods included when the parent's store has them (`watchRunRequests` by push messages).
 */
export function remoteStore(parent: ParentChannel, info: RemoteStoreInfo): Store {
  const store: Store = {
    backend: info.backend,
    record: (execution) => parent.call('store', 'record', [execution]),
    history: (job, query) => parent.call('store', 'history', [job, query]),
    prune: (before) => parent.call('store', 'prune', [before]),
    getJobState: (job) => parent.call('store', 'getJobState', [job]),
    setPaused: (job, paused, options) =>
      parent.call(
        'store',
        'setPaused',
        options === undefined ? [job, paused] : [job, paused, options],
      ),
  };
  const extra = store as unknown as Record<string, (...args: unknown[]) => unknown>;
  for (const method of info.extraMethods) {
    extra[method] =
      method === WATCH
        ? (listener: unknown) => parent.watch(listener as (job: string) => void)
        : (...args: unknown[]) => parent.call('store', method, args);
  }
  return store;
}
