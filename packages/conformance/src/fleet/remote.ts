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
  hasWithdraw: boolean;
}

/** Describes `lock` for {@link remoteLock}. */
export function remoteLockInfo(lock: Lock): RemoteLockInfo {
  const { backend, capabilities, windowMs } = lock;
  return { backend, capabilities, windowMs, hasWithdraw: typeof lock.withdraw === 'function' };
}

/** Something with a Node IPC channel: a `ChildProcess` in the parent, `process` in the child. */
interface Channel {
  send?(message: unknown): boolean;
  on(event: 'message', listener: (message: unknown) => void): unknown;
  off(event: 'message', listener: (message: unknown) => void): unknown;
}

const isCall = (m: unknown): m is CallMessage => (m as CallMessage | null)?.t === 'call';
const isReply = (m: unknown): m is ReplyMessage => (m as ReplyMessage | null)?.t === 'reply';

/**
 * Parent side: answers the child's lock and store calls with `lock` and `store`. Returns a
 * function that stops answering.
 */
export function serveBackend(child: Channel, lock: Lock, store: Store): () => void {
  const targets = { lock, store } as unknown as Record<
    string,
    Record<string, (...args: unknown[]) => Promise<unknown>>
  >;
  const onMessage = (message: unknown) => {
    if (!isCall(message)) return;
    const { id, target, method, args } = message;
    const reply = (m: Omit<ReplyMessage, 't' | 'id'>) => {
      try {
        child.send?.({ t: 'reply', id, ...m });
      } catch {
        // the child is gone; nobody waits for the answer
      }
    };
    Promise.resolve()
      .then(() => {
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
  return () => child.off('message', onMessage);
}

/**
 * Child side: sends calls to the parent and matches the answers. One per child process (the
 * call ids are unique per channel), shared by its remote lock and store.
 */
export class ParentChannel {
  private nextId = 1;
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
      if (!this.channel.send?.({ t: 'call', id, target, method, args } satisfies CallMessage)) {
        this.pending.delete(id);
        reject(new BackendUnavailableError(this.backend, method, new Error('no IPC channel')));
      }
    });
  }

  private toError(error: ReplyMessage['error'], id: number): Error {
    const message = error?.message ?? `call ${id} failed`;
    if (error?.code === 'BACKEND_UNAVAILABLE') {
      return new BackendUnavailableError(this.backend, 'remote call', new Error(message));
    }
    return new Error(message);
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
  if (info.hasWithdraw) lock.withdraw = (lease) => parent.call('lock', 'withdraw', [lease]);
  return lock;
}

/** Child side: a store whose calls run in the parent (see {@link serveBackend}). */
export function remoteStore(parent: ParentChannel, backend: string): Store {
  return {
    backend,
    record: (execution) => parent.call('store', 'record', [execution]),
    history: (job, query) => parent.call('store', 'history', [job, query]),
    prune: (before) => parent.call('store', 'prune', [before]),
    getJobState: (job) => parent.call('store', 'getJobState', [job]),
    setPaused: (job, paused) => parent.call('store', 'setPaused', [job, paused]),
  };
}
