import { randomBytes } from 'node:crypto';
import {
  type AuditEntry,
  type AuditPage,
  type AuditQuery,
  type AuditRecord,
  type AuditRetention,
  type AuditStore,
  InvalidOptionError,
} from '@fleetcron/core';
import { AUDIT_PRUNE_BATCH, auditFilter, encodeAuditCursor } from '@fleetcron/core/backend';
import type { Etcd3, IRequestOp } from 'etcd3';
import { prefixEnd } from './etcd-fleet.js';
import { padTime, type StoreKeys } from './keys.js';

/** Entries read per round trip when a page filters (by action or time). */
const FILTER_BATCH = 200;
/** This process's part of every entry id it makes: two processes never make the same id. */
const PROCESS_PART = randomBytes(4).toString('hex');
/** What an entry id looks like: `<time 16 digits>-<sequence 6 digits>-<process 8 hex>`. */
const ID = /^\d{16}-\d{6}-[0-9a-f]{8}$/;

/**
 * The ids of this process's entries: keys in the order they were made (the time, never going back
 * in this process, then a sequence within the millisecond). etcd reports no clock, so between
 * processes the order is that of their clocks (as `pausedAt` and `requestedAt` are).
 */
const lastId = { at: 0, seq: 0 };

/**
 * `id` with every digit `d` as `9 - d` and every hex letter or digit of its process part as its
 * complement in `0-f` (the `-` kept): the order of inverted ids is exactly the reverse of the
 * order of ids, so a range in etcd's own key order reads the newest first.
 */
export function invertAuditId(id: string): string {
  const [time, seq, process] = id.split('-') as [string, string, string];
  const flip = (text: string, base: number) =>
    [...text].map((c) => (base - 1 - Number.parseInt(c, base)).toString(base)).join('');
  return `${flip(time, 10)}-${flip(seq, 10)}-${flip(process, 16)}`;
}

/** A fresh entry id for a mutation made at `now` (writer's clock). */
export function nextAuditId(now: number): string {
  if (now > lastId.at) {
    lastId.at = now;
    lastId.seq = 0;
  } else lastId.seq += 1;
  return `${padTime(lastId.at)}-${String(lastId.seq).padStart(6, '0')}-${PROCESS_PART}`;
}

/** How the audit log calls etcd (the store's deadline and error mapping). */
type Call = <T>(operation: string, fn: (o: { deadline: Date }) => Promise<T>) => Promise<T>;

/** A put of `value` at `key`, as one operation of a transaction. */
function put(key: string, value: string): IRequestOp {
  return { request_put: { key: Buffer.from(key), value: Buffer.from(value) } };
}

/**
 * The audit log of `EtcdStore`: each entry is three keys, `n/<inverted id>` and
 * `j/<job>/<inverted id>` (the entry's JSON, newest first) and `a/<id>` (its job, oldest first),
 * put by {@link EtcdAudit.puts} inside the mutation's own transaction, so an entry exists exactly
 * when its mutation committed. Every read is a range in etcd's own key order with a limit: a
 * range sorted any other way makes the server read and sort every key of the range, values
 * included (measured: 250 ms a page at 100,000 entries). Pages read `n/` (or the job's `j/`).
 * After a mutation {@link EtcdAudit.prune} deletes at most {@link AUDIT_PRUNE_BATCH} of the oldest
 * entries beyond `maxEntries` or older than `maxAgeMs`.
 */
export class EtcdAudit implements AuditStore {
  constructor(
    private readonly client: Etcd3,
    private readonly keys: StoreKeys,
    private readonly retention: Required<AuditRetention>,
    private readonly maxTxnOps: number,
    private readonly call: Call,
  ) {}

  /** The puts that store `record` made at `at` (writer's clock), for the mutation's transaction. */
  puts(record: AuditRecord, at: number): IRequestOp[] {
    const id = nextAuditId(at);
    const inverted = invertAuditId(id);
    const value = JSON.stringify({ id, at, ...record } satisfies AuditEntry);
    return [
      put(this.keys.audit(inverted), value),
      put(this.keys.jobAudit(record.job, inverted), value),
      put(this.keys.auditAge(id), JSON.stringify([record.job, at])),
    ];
  }

  /**
   * Deletes at most {@link AUDIT_PRUNE_BATCH} oldest entries beyond the bounds (`now` on the
   * writer's clock): one range of `a/` in key order gives the oldest and (its `count`) how many
   * there are; one transaction deletes their three keys each. A failure is left for the next
   * mutation's prune (the mutation itself has committed).
   */
  async prune(now: number): Promise<void> {
    try {
      const whole = Buffer.from(this.keys.allAuditAges());
      const oldest = await this.call('pruneAudit', (o) =>
        this.client.kv.range(
          { key: whole, range_end: prefixEnd(whole), limit: AUDIT_PRUNE_BATCH },
          o,
        ),
      );
      let excess = Number(oldest.count) - this.retention.maxEntries;
      const deletes: IRequestOp[] = [];
      for (const kv of oldest.kvs) {
        const [job, at] = JSON.parse(kv.value.toString()) as [string, number];
        if (excess <= 0 && at >= now - this.retention.maxAgeMs) break;
        const id = kv.key.toString().slice(whole.length);
        const inverted = invertAuditId(id);
        deletes.push(
          { request_delete_range: { key: kv.key } },
          { request_delete_range: { key: Buffer.from(this.keys.audit(inverted)) } },
          { request_delete_range: { key: Buffer.from(this.keys.jobAudit(job, inverted)) } },
        );
        excess -= 1;
      }
      const perTxn = this.maxTxnOps - (this.maxTxnOps % 3);
      for (let i = 0; i < deletes.length; i += perTxn) {
        const chunk = deletes.slice(i, i + perTxn);
        await this.call('pruneAudit', (o) =>
          this.client.kv.txn({ compare: [], success: chunk, failure: [] }, o),
        );
      }
    } catch {
      // bounded work per mutation: what is left is pruned by the next one
    }
  }

  async listAudit(query?: AuditQuery): Promise<AuditPage> {
    const { limit, job, actions, before, after } = auditFilter(query);
    if (after !== null && !ID.test(after)) {
      throw new InvalidOptionError(
        'cursor',
        'is not a cursor returned by listAudit() of this store; pass nextCursor unchanged.',
      );
    }
    const prefix = job === null ? this.keys.allAudit() : this.keys.jobAudits(job);
    const end = prefixEnd(Buffer.from(prefix));
    // the first key after the cursor's entry (inverted ids: later keys are older entries)
    let start = Buffer.from(after === null ? prefix : `${prefix}${invertAuditId(after)}\0`);
    const filtered = actions !== null || before !== null;
    const out: AuditEntry[] = [];
    for (;;) {
      const count = filtered ? Math.max(limit + 1, FILTER_BATCH) : limit + 1;
      const range = await this.call('listAudit', (o) =>
        this.client.kv.range({ key: start, range_end: end, limit: count }, o),
      );
      for (const kv of range.kvs) {
        if (out.length > limit) break;
        const entry = JSON.parse(kv.value.toString()) as AuditEntry;
        if (
          (actions === null || actions.includes(entry.action)) &&
          (before === null || entry.at < before)
        )
          out.push(entry);
        start = Buffer.concat([kv.key, Buffer.from([0])]);
      }
      if (range.kvs.length < count || out.length > limit) break;
    }
    const page = out.slice(0, limit);
    const last = page.at(-1);
    return {
      entries: page,
      nextCursor: out.length > limit && last ? encodeAuditCursor(last.id) : null,
    };
  }
}
