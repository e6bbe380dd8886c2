import {
  type AuditRecord,
  BackendUnavailableError,
  DuplicateScheduleError,
  ScheduleConflictError,
  type ScheduleDefinition,
  type SchedulePage,
  type ScheduleQuery,
  type ScheduleWrite,
  type StoredSchedule,
  UnknownScheduleError,
} from '@fleetcron/core';
import {
  assertExpectedVersion,
  assertWriter,
  checkScheduleId,
  encodeScheduleCursor,
  normalizeScheduleDefinition,
  replaceAuditAction,
  scheduleAuditRecord,
  scheduleQuery,
} from '@fleetcron/core/backend';
import { BACKEND, type Deadline } from '@fleetcron/etcd-shared';
import { type Etcd3, GRPCResourceExhastedError, type IKeyValue, type IRangeResponse } from 'etcd3';
import type { EtcdAudit } from './etcd-audit.js';
import { prefixEnd } from './etcd-fleet.js';
import type { StoreKeys } from './keys.js';
import {
  decodeScheduleRecord,
  encodeScheduleRecord,
  type ScheduleRecord,
  scheduleOf,
} from './schedule-record.js';

/** Schedule keys read per round trip by `listSchedules` (tombstones and other handlers skipped). */
const LIST_BATCH = 500;

/**
 * Transactions a write tries when the key changed between its read and its transaction while
 * the change it meets still lets it through (a tombstone revived by someone else, then removed
 * again). A conflict or a duplicate ends it at once.
 */
const WRITE_ATTEMPTS = 5;

/** What {@link EtcdSchedules} needs of its store. */
export interface EtcdSchedulesContext {
  client: Etcd3;
  keys: StoreKeys;
  /** The store's clock (`createdAt`, `updatedAt`): etcd reports no server time. */
  now(): number;
  /** The audit log: each write puts its entry in its own transaction. */
  audit: EtcdAudit;
  call<T>(operation: string, fn: (o: Deadline) => Promise<T>): Promise<T>;
}

/** A schedule key as read: its record and the revision of its last write. */
interface Read {
  record: ScheduleRecord;
  modRevision: string;
}

/**
 * The stored-schedule reads and writes of `EtcdStore`: one key per schedule (`s/<id>`, its
 * tombstone kept), every write one transaction that compares the key to what was read (its
 * `mod_revision`, or that it does not exist), so of two writers from one version exactly one
 * commits; the loser reads the key again and gets the typed error. The write and its watch
 * event are the same etcd revision (see `ScheduleWatch`).
 */
export class EtcdSchedules {
  constructor(private readonly context: EtcdSchedulesContext) {}

  async createSchedule(
    id: string,
    definition: ScheduleDefinition,
    write: ScheduleWrite,
  ): Promise<StoredSchedule> {
    checkScheduleId(id);
    const def = normalizeScheduleDefinition(definition);
    const by = assertWriter(write);
    let seen: Read | null = null; // null: try "the key does not exist"
    for (let attempt = 1; attempt <= WRITE_ATTEMPTS; attempt++) {
      if (seen && !seen.record.removed) throw new DuplicateScheduleError(id);
      const now = this.context.now();
      const record: ScheduleRecord = {
        id,
        ...def,
        version: (seen?.record.version ?? 0) + 1,
        createdAt: now,
        createdBy: by,
        updatedAt: now,
        updatedBy: by,
        removed: false,
      };
      const audit = scheduleAuditRecord('schedule.create', scheduleOf(record), write);
      const outcome = await this.commit('createSchedule', id, seen, record, audit);
      if (outcome === 'written') return scheduleOf(record);
      seen = outcome;
      if (seen === null) continue; // removed by someone between: create from nothing
    }
    throw contended('createSchedule', id);
  }

  async replaceSchedule(
    id: string,
    definition: ScheduleDefinition,
    write: ScheduleWrite & { expectedVersion: number },
  ): Promise<StoredSchedule> {
    checkScheduleId(id);
    const def = normalizeScheduleDefinition(definition);
    const by = assertWriter(write);
    assertExpectedVersion(write.expectedVersion);
    const action = replaceAuditAction(write);
    const expected = write.expectedVersion;
    let seen = await this.read('replaceSchedule', id);
    for (let attempt = 1; attempt <= WRITE_ATTEMPTS; attempt++) {
      const current = this.live(id, seen, expected);
      const record: ScheduleRecord = {
        ...current,
        ...def,
        version: current.version + 1,
        updatedAt: this.context.now(),
        updatedBy: by,
        removed: false,
      };
      const audit = scheduleAuditRecord(action, scheduleOf(record), write);
      const outcome = await this.commit('replaceSchedule', id, seen, record, audit);
      if (outcome === 'written') return scheduleOf(record);
      seen = outcome;
    }
    throw contended('replaceSchedule', id);
  }

  async removeSchedule(
    id: string,
    write: ScheduleWrite & { expectedVersion: number | null },
  ): Promise<StoredSchedule> {
    checkScheduleId(id);
    const by = assertWriter(write);
    const expected = write.expectedVersion ?? null;
    if (expected !== null) assertExpectedVersion(expected);
    let seen = await this.read('removeSchedule', id);
    for (let attempt = 1; attempt <= WRITE_ATTEMPTS; attempt++) {
      const current = this.live(id, seen, expected);
      const tombstone: ScheduleRecord = {
        ...current,
        version: current.version + 1,
        updatedAt: this.context.now(),
        updatedBy: by,
        removed: true,
      };
      const audit = scheduleAuditRecord('schedule.remove', scheduleOf(current), write);
      const outcome = await this.commit('removeSchedule', id, seen, tombstone, audit);
      if (outcome === 'written') return scheduleOf(current);
      seen = outcome;
    }
    throw contended('removeSchedule', id);
  }

  async getSchedule(id: string): Promise<StoredSchedule | null> {
    checkScheduleId(id);
    const seen = await this.read('getSchedule', id);
    return seen && !seen.record.removed ? scheduleOf(seen.record) : null;
  }

  /**
   * Reads keys in id order from after the cursor, `LIST_BATCH` per round trip, until one more
   * live schedule (of the handler) than the page is found or the range ends. The handler filter
   * runs here: a page of a rare handler reads every key between its schedules. A read whose
   * answer is over the client's gRPC message limit (4 MiB by default: about 60 schedules of
   * 64 KiB `data`) is sent again for half as many keys, down to one.
   */
  async listSchedules(query?: ScheduleQuery): Promise<SchedulePage> {
    const { limit, handler, after } = scheduleQuery(query);
    const { client, keys } = this.context;
    const prefix = keys.allSchedules();
    const end = prefixEnd(Buffer.from(prefix));
    let start = Buffer.from(after === null ? prefix : `${keys.schedule(after)}\0`);
    const found: StoredSchedule[] = [];
    let batch = Math.max(limit + 1, LIST_BATCH);
    for (;;) {
      let response: IRangeResponse;
      try {
        response = await this.context.call('listSchedules', (o) =>
          client.kv.range({ key: start, range_end: end, limit: batch }, o),
        );
      } catch (error) {
        if (batch === 1 || !overMessageLimit(error)) throw error;
        batch = Math.ceil(batch / 2);
        continue;
      }
      for (const kv of response.kvs) {
        const record = decodeScheduleRecord(kv.value);
        if (record.removed || (handler !== null && record.handler !== handler)) continue;
        found.push(scheduleOf(record));
        if (found.length > limit) break;
      }
      const last = response.kvs.at(-1);
      if (found.length > limit || !response.more || !last) break;
      start = Buffer.concat([last.key, Buffer.from([0])]);
    }
    const schedules = found.slice(0, limit);
    const last = schedules.at(-1);
    return {
      schedules,
      nextCursor: found.length > limit && last ? encodeScheduleCursor(last.id) : null,
    };
  }

  /** The live schedule of `seen` at `expected` (any version when `null`), or the typed error. */
  private live(id: string, seen: Read | null, expected: number | null): ScheduleRecord {
    if (!seen) throw new UnknownScheduleError(id);
    const { record } = seen;
    if (record.removed) {
      if (expected === null) throw new UnknownScheduleError(id);
      throw new ScheduleConflictError(id, expected, null);
    }
    if (expected !== null && record.version !== expected) {
      throw new ScheduleConflictError(id, expected, record.version);
    }
    return record;
  }

  /**
   * Puts `record` and the audit entry `audit` if the key is still as `seen` (same `mod_revision`;
   * absent when `seen` is null), in one transaction; otherwise the same transaction reads the key
   * as it is now (and writes nothing). After a write, prunes the audit log (bounded).
   */
  private async commit(
    operation: string,
    id: string,
    seen: Read | null,
    record: ScheduleRecord,
    audit: AuditRecord,
  ): Promise<'written' | Read | null> {
    const key = Buffer.from(this.context.keys.schedule(id));
    const compare = seen
      ? { key, target: 'Mod' as const, result: 'Equal' as const, mod_revision: seen.modRevision }
      : { key, target: 'Version' as const, result: 'Equal' as const, version: 0 };
    const response = await this.context.call(operation, (o) =>
      this.context.client.kv.txn(
        {
          compare: [compare],
          success: [
            { request_put: { key, value: Buffer.from(encodeScheduleRecord(record)) } },
            ...this.context.audit.puts(audit, record.updatedAt),
          ],
          failure: [{ request_range: { key } }],
        },
        o,
      ),
    );
    if (response.succeeded) {
      await this.context.audit.prune(record.updatedAt);
      return 'written';
    }
    return readOf(response.responses[0]?.response_range?.kvs[0]);
  }

  private async read(operation: string, id: string): Promise<Read | null> {
    const key = Buffer.from(this.context.keys.schedule(id));
    const response = await this.context.call(operation, (o) =>
      this.context.client.kv.range({ key }, o),
    );
    return readOf(response.kvs[0]);
  }
}

function readOf(kv: IKeyValue | undefined): Read | null {
  return kv ? { record: decodeScheduleRecord(kv.value), modRevision: kv.mod_revision } : null;
}

/** Whether `error` is an answer over the client's gRPC receive limit (`RESOURCE_EXHAUSTED`). */
function overMessageLimit(error: unknown): boolean {
  return (
    error instanceof BackendUnavailableError && error.cause instanceof GRPCResourceExhastedError
  );
}

function contended(operation: string, id: string): BackendUnavailableError {
  return BackendUnavailableError.because(
    BACKEND,
    operation,
    `schedule ${JSON.stringify(id)} changed under each of ${WRITE_ATTEMPTS} transactions`,
  );
}
