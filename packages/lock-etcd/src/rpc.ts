import { BackendUnavailableError } from '@fleetcron/core';
import { BACKEND, callEtcd, randomLeaseId } from '@fleetcron/etcd-shared';
import {
  type Etcd3,
  EtcdInvalidAuthTokenError,
  EtcdLeaseInvalidError,
  type ICompare,
  type IKeyValue,
  type IRequestOp,
  type ITxnResponse,
} from 'etcd3';
import { encodeFireAt, prefixEnd } from './keys.js';
import { rawTxnOf } from './raw-txn.js';

/** Backend name used in errors and capabilities. */
export { BACKEND };

/** etcd's smallest lease: 2 s (TTLs are whole seconds). */
export const ETCD_MIN_LEASE_MS = 2_000;

/**
 * The few etcd calls {@link EtcdLock} makes, each bounded by a deadline (so nothing hangs while
 * the server is paused or unreachable) and each failing with {@link BackendUnavailableError},
 * except "lease not found", which is rethrown as etcd3's `EtcdLeaseInvalidError` so callers
 * can react to a lease that expired under them.
 *
 * Uses the client's raw `kv` / `leaseClient` (no namespace applicator): keys are built by
 * {@link KeyLayout} with the adapter's own prefix.
 */
export class EtcdRpc {
  /** Transactions through the client's connection with the adapter's own codec (`raw-txn`). */
  private readonly rawTxn: ReturnType<typeof rawTxnOf>;

  constructor(
    private readonly client: Etcd3,
    private readonly timeoutMs: number,
  ) {
    this.rawTxn = rawTxnOf(client);
  }

  /**
   * One transaction. Once `signal` is aborted it is not sent (it rejects with
   * `BackendUnavailableError`); the client never re-sends it either (see `singleAttemptClientOf` in `@fleetcron/etcd-shared`).
   */
  async txn(
    operation: string,
    compare: ICompare[],
    success: IRequestOp[],
    failure: IRequestOp[],
    signal?: AbortSignal,
  ): Promise<ITxnResponse> {
    if (signal?.aborted) {
      throw BackendUnavailableError.notSent(BACKEND, operation);
    }
    const request = { compare, success, failure };
    return this.call(operation, async (deadline) => {
      if (!this.rawTxn) return this.client.kv.txn(request, { deadline });
      try {
        return await this.rawTxn(request, deadline);
      } catch (error) {
        // Not applied. etcd3's own call re-authenticates (and sends it once more).
        if (!(error instanceof EtcdInvalidAuthTokenError)) throw error;
        return this.client.kv.txn(request, { deadline });
      }
    });
  }

  /**
   * Grants a lease of `ttlSec` seconds; resolves its id. The adapter picks the id itself (a random
   * safe integer): etcd's own ids use all 64 bits, and a JavaScript number cannot hold them when
   * protobufjs runs without `long` (for example when `long` resolves to its ESM build).
   */
  async grant(operation: string, ttlSec: number): Promise<string> {
    for (let attempt = 0; ; attempt++) {
      const id = randomLeaseId();
      try {
        const res = await this.call(operation, (deadline) =>
          this.client.leaseClient.leaseGrant({ TTL: ttlSec, ID: id }, { deadline }),
        );
        if (res.error) throw BackendUnavailableError.because(BACKEND, operation, res.error);
        return String(id);
      } catch (error) {
        const taken = error instanceof Error && /lease already exists/.test(String(error.cause));
        if (!taken || attempt >= 3) throw error;
      }
    }
  }

  /** Revokes a lease (deleting its keys); a lease that is already gone is not an error. */
  async revoke(operation: string, id: string): Promise<void> {
    try {
      await this.call(operation, (deadline) =>
        this.client.leaseClient.leaseRevoke({ ID: id }, { deadline }),
      );
    } catch (error) {
      if (!(error instanceof EtcdLeaseInvalidError)) throw error;
    }
  }

  /**
   * Sends one keepalive for each lease in `ids` over one stream. Resolves the TTL (seconds) the
   * server granted each one; `0` means the lease no longer exists.
   */
  async keepAlive(operation: string, ids: readonly string[]): Promise<Map<string, number>> {
    const result = new Map<string, number>();
    if (ids.length === 0) return result;
    return this.call(operation, async (deadline) => {
      const stream = await this.client.leaseClient.leaseKeepAlive({ deadline });
      return new Promise<Map<string, number>>((resolve, reject) => {
        const pending = new Set(ids);
        stream.on('error', (error) => reject(error));
        stream.on('end', () => {
          if (pending.size > 0) {
            const reason = `etcd closed the keepalive stream before answering ${pending.size} of ${ids.length} leases`;
            reject(BackendUnavailableError.because(BACKEND, operation, reason));
          }
        });
        stream.on('data', (res) => {
          result.set(res.ID, Number(res.TTL));
          pending.delete(res.ID);
          if (pending.size === 0) {
            resolve(result);
            stream.end();
          }
        });
        for (const id of ids) stream.write({ ID: id });
      });
    });
  }

  /**
   * Runs `fn` with a gRPC deadline, bounded locally (`callEtcd`): failures become
   * `BackendUnavailableError`, except etcd3's `EtcdLeaseInvalidError` (a lease that is gone).
   */
  private call<T>(operation: string, fn: (deadline: Date) => Promise<T>): Promise<T> {
    return callEtcd(
      operation,
      this.timeoutMs,
      ({ deadline }) => fn(deadline),
      (error) => error instanceof EtcdLeaseInvalidError,
    );
  }
}

/** A range request op for one key. */
export function getOp(key: Buffer): IRequestOp {
  return { request_range: { key } };
}

/** A range request op for every key starting with `prefix`. */
export function getPrefixOp(prefix: Buffer, countOnly = false): IRequestOp {
  return { request_range: { key: prefix, range_end: prefixEnd(prefix), count_only: countOnly } };
}

/** A put op attaching `key` to etcd lease `lease`. */
export function putOp(key: Buffer, value: unknown, lease: string): IRequestOp {
  return { request_put: { key, value: Buffer.from(JSON.stringify(value)), lease } };
}

/** A delete op for one key. */
export function deleteOp(key: Buffer): IRequestOp {
  return { request_delete_range: { key } };
}

/**
 * Moves the catch-up mark at `markKey` forward to `fireAt` (a nested transaction inside a claim's
 * success branch): put unless the stored mark is already at or past `fireAt`. etcd compares
 * values as bytes, which orders {@link encodeFireAt} values like the numbers for fires at or
 * after 1970, and a value compare on a missing key is always false, so a missing mark is put.
 * For a whole-millisecond `fireAt` "at or past" is "after `fireAt - 1`": one compare and one put.
 * Otherwise: put when the stored mark is older, or (inner transaction) when there is none.
 */
export function moveMarkOp(markKey: Buffer, fireAt: number): IRequestOp {
  const [value, before] = markValues(fireAt);
  const put: IRequestOp = { request_put: { key: markKey, value } };
  if (Number.isSafeInteger(fireAt) && fireAt >= 1) {
    const atOrPast: ICompare = { key: markKey, target: 'Value', result: 'Greater', value: before };
    return { request_txn: { compare: [atOrPast], success: [], failure: [put] } };
  }
  return {
    request_txn: {
      compare: [markBefore(markKey, fireAt)],
      success: [put],
      failure: [{ request_txn: { compare: [absent(markKey)], success: [put], failure: [] } }],
    },
  };
}

/** The last fire time's mark values (`fireAt`, `fireAt - 1`): a batch's fires mostly share one. */
let lastMark: { fireAt: number; values: [Buffer, Buffer] } | undefined;
export function markValues(fireAt: number): [Buffer, Buffer] {
  if (lastMark?.fireAt !== fireAt) {
    const values: [Buffer, Buffer] = [
      Buffer.from(encodeFireAt(fireAt)),
      Buffer.from(encodeFireAt(fireAt - 1)),
    ];
    lastMark = { fireAt, values };
  }
  return lastMark.values;
}

/** Compare: the mark at `markKey` exists and is older than `fireAt`. */
export function markBefore(markKey: Buffer, fireAt: number): ICompare {
  return {
    key: markKey,
    target: 'Value',
    result: 'Less',
    value: Buffer.from(encodeFireAt(fireAt)),
  };
}

/** The fire time a mark key holds, or `null` for no key. */
export function markOf(kv: IKeyValue | undefined): number | null {
  return kv ? Number(kv.value.toString()) : null;
}

/** Compare: `key` does not exist (its create revision is 0). */
export function absent(key: Buffer): ICompare {
  return { key, target: 'Create', result: 'Equal', create_revision: 0 };
}

/** Compare: `key` exists (its create revision is above 0). */
export function present(key: Buffer): ICompare {
  return { key, target: 'Create', result: 'Greater', create_revision: 0 };
}

/** Compare: `key` exists and was created at revision `revision` (holds that token). */
export function createdAt(key: Buffer, revision: number | string): ICompare {
  return { key, target: 'Create', result: 'Equal', create_revision: revision };
}

/** Compare: `key` was last modified at revision `revision`. */
export function modifiedAt(key: Buffer, revision: number | string): ICompare {
  return { key, target: 'Mod', result: 'Equal', mod_revision: revision };
}

/** The key-values of the `index`-th response of a transaction (a range op). */
export function kvsOf(res: ITxnResponse, index: number): IKeyValue[] {
  return res.responses[index]?.response_range?.kvs ?? [];
}

/** Parses a JSON value written by {@link putOp}; `null` when it is not ours. */
export function parseValue<T>(kv: IKeyValue): T | null {
  try {
    return JSON.parse(kv.value.toString()) as T;
  } catch {
    return null;
  }
}
