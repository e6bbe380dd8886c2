import { randomUUID } from 'node:crypto';
import {
  BackendUnavailableError,
  DuplicateScheduleError,
  type ScheduleChange,
  ScheduleConflictError,
  type ScheduleDefinition,
  type SchedulePage,
  type ScheduleQuery,
  type ScheduleStore,
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
import { type RedisClient, type RedisCommands, RedisScript } from '@fleetcron/redis-shared';
import { ChannelSubscriber } from './channel-subscriber.js';
import type { ScheduleKeys } from './keys.js';
import type { AuditTail, RedisAudit } from './redis-audit.js';
import { decodeScheduleRecord, encodeScheduleDefinition } from './schedule-record.js';
import {
  CREATE_SCHEDULE,
  LIST_SCHEDULES,
  REMOVE_SCHEDULE,
  REPLACE_SCHEDULE,
} from './schedule-scripts.js';

const createScript = new RedisScript(CREATE_SCHEDULE);
const replaceScript = new RedisScript(REPLACE_SCHEDULE);
const removeScript = new RedisScript(REMOVE_SCHEDULE);
const listScript = new RedisScript(LIST_SCHEDULES);

/**
 * What a write script answers: `['ok', record]`, `['duplicate']`, `['unknown']`,
 * `['conflict', v]`, or (remove) `['stale']`.
 */
type WriteReply = [string, string?];

/** A placeholder definition for the entry of a remove that will answer `unknown` (no entry). */
const EMPTY: ScheduleDefinition = {
  handler: '',
  trigger: { kind: 'every', ms: 1, anchor: 0 },
  data: null,
  enabled: false,
  options: {},
};

/** Removes sent before giving up when the schedule keeps changing between read and script. */
const REMOVE_ATTEMPTS = 5;

/**
 * The schedule `id` as a write would leave it, for its audit record (which reads its id,
 * handler, enabled, trigger and version; the script supplies the version where only it knows).
 */
function planned(id: string, def: ScheduleDefinition, by: string, version: number): StoredSchedule {
  return { id, ...def, version, createdAt: 0, createdBy: by, updatedAt: 0, updatedBy: by };
}

/**
 * The {@link ScheduleStore} of `RedisStore`: one hash of records and two lexicographic indexes
 * under the hash tag `{prefix}`; every write one Lua script that checks the version, writes and
 * PUBLISHes the id in one atomic step; push through pub/sub on a connection of its own, with a
 * `resync` to the watchers each time its subscription takes effect (first and every reconnect).
 */
export class RedisSchedules implements ScheduleStore {
  private readonly watchers = new Set<(change: ScheduleChange) => void>();
  private readonly subscriber: ChannelSubscriber;

  constructor(
    private readonly redis: RedisClient,
    private readonly commands: RedisCommands,
    private readonly keys: ScheduleKeys,
    private readonly audit: RedisAudit,
  ) {
    this.subscriber = new ChannelSubscriber(redis, keys.channel, {
      connectionName: scheduleWatchConnectionName(keys.channel),
      onSubscribed: () => this.resyncWatchers(),
    });
  }

  async createSchedule(
    id: string,
    definition: ScheduleDefinition,
    write: ScheduleWrite,
  ): Promise<StoredSchedule> {
    checkScheduleId(id);
    const def = normalizeScheduleDefinition(definition);
    const by = assertWriter(write);
    const audit = this.audit.tail(
      scheduleAuditRecord('schedule.create', planned(id, def, by, 0), write),
    );
    const [status, record] = await this.write('createSchedule', createScript, audit, [
      id,
      def.handler,
      encodeScheduleDefinition(def),
      by,
      randomUUID(),
      this.keys.channel,
    ]);
    if (status === 'duplicate') throw new DuplicateScheduleError(id);
    return this.written(id, status, record, null);
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
    const after = planned(id, def, by, write.expectedVersion + 1);
    const audit = this.audit.tail(scheduleAuditRecord(replaceAuditAction(write), after, write));
    const [status, record] = await this.write('replaceSchedule', replaceScript, audit, [
      id,
      def.handler,
      encodeScheduleDefinition(def),
      by,
      randomUUID(),
      String(write.expectedVersion),
      this.keys.channel,
    ]);
    return this.written(id, status, record, write.expectedVersion);
  }

  async removeSchedule(
    id: string,
    write: ScheduleWrite & { expectedVersion: number | null },
  ): Promise<StoredSchedule> {
    checkScheduleId(id);
    const by = assertWriter(write);
    const expected = write.expectedVersion ?? null;
    if (expected !== null) assertExpectedVersion(expected);
    // The entry describes the schedule as removed (its handler, trigger, version): read it, and
    // let the script refuse (`stale`) when it changed since, then read again.
    for (let attempt = 1; attempt <= REMOVE_ATTEMPTS; attempt++) {
      const seen = await this.commands.call('removeSchedule', () =>
        this.redis.hget(this.keys.records, id),
      );
      const current = seen === null ? null : decodeScheduleRecord(id, seen);
      const live = current && !current.removed ? current.schedule : null;
      const audit = this.audit.tail(
        scheduleAuditRecord('schedule.remove', live ?? planned(id, EMPTY, by, 0), write),
      );
      const [status, record] = await this.write('removeSchedule', removeScript, audit, [
        id,
        by,
        randomUUID(),
        expected === null ? '' : String(expected),
        this.keys.channel,
        live === null ? '' : String(live.version),
      ]);
      if (status !== 'stale') return this.written(id, status, record, expected);
    }
    throw BackendUnavailableError.because(
      'redis',
      'removeSchedule',
      `schedule ${JSON.stringify(id)} changed between each of ${REMOVE_ATTEMPTS} reads and removes`,
    );
  }

  async getSchedule(id: string): Promise<StoredSchedule | null> {
    checkScheduleId(id);
    const record = await this.commands.call('getSchedule', () =>
      this.redis.hget(this.keys.records, id),
    );
    if (record === null) return null;
    const read = decodeScheduleRecord(id, record);
    return read.removed ? null : read.schedule;
  }

  async listSchedules(query?: ScheduleQuery): Promise<SchedulePage> {
    const { limit, handler, after } = scheduleQuery(query);
    // Ids and handler names are ASCII without spaces, so byte order is JavaScript's order and
    // `<handler> ` prefixes exactly that handler's members ('!' is the byte after ' ').
    const head = handler === null ? '' : `${handler} `;
    const min = after === null ? (handler === null ? '-' : `[${head}`) : `(${head}${after}`;
    const max = handler === null ? '+' : `(${handler}!`;
    const index = handler === null ? this.keys.ids : this.keys.byHandler;
    const flat = (await this.commands.call('listSchedules', (signal) =>
      listScript.run(
        this.redis,
        [this.keys.records, index],
        [min, max, String(limit + 1), String(head.length)],
        signal,
      ),
    )) as string[];
    const schedules: StoredSchedule[] = [];
    for (let i = 0; i < flat.length; i += 2) {
      schedules.push(decodeScheduleRecord(flat[i]!, flat[i + 1]!).schedule);
    }
    const page = schedules.slice(0, limit);
    const last = page.at(-1);
    return {
      schedules: page,
      nextCursor: schedules.length > limit && last ? encodeScheduleCursor(last.id) : null,
    };
  }

  /**
   * Push via pub/sub on a duplicate of your client, made by the first watcher and closed when the
   * last one leaves. Every watcher hears `resync` each time the subscription takes effect.
   */
  watchSchedules(listener: (change: ScheduleChange) => void): () => void {
    this.watchers.add(listener);
    const stop = this.subscriber.subscribe((id) => listener({ kind: 'changed', id }));
    return () => {
      this.watchers.delete(listener);
      stop();
    };
  }

  /** Closes the subscriber connection, if any. */
  close(): void {
    this.subscriber.stop();
  }

  /** Tells every watcher to read everything again (the subscription is new). */
  private resyncWatchers(): void {
    for (const watcher of this.watchers) {
      try {
        watcher({ kind: 'resync' });
      } catch {
        // a watcher's failure is its own
      }
    }
  }

  private async write(
    operation: string,
    script: RedisScript,
    audit: AuditTail,
    args: string[],
  ): Promise<WriteReply> {
    const keys = [this.keys.records, this.keys.ids, this.keys.byHandler, ...audit.keys];
    return (await this.commands.call(operation, (signal) =>
      script.run(this.redis, keys, [...args, ...audit.args], signal),
    )) as WriteReply;
  }

  /** The schedule a write script answered, or its typed error. */
  private written(
    id: string,
    status: string,
    record: string | undefined,
    expected: number | null,
  ): StoredSchedule {
    if (status === 'ok' && record !== undefined) return decodeScheduleRecord(id, record).schedule;
    if (status === 'unknown') throw new UnknownScheduleError(id);
    if (status === 'conflict') {
      throw new ScheduleConflictError(id, expected ?? 0, record ? Number(record) : null);
    }
    throw new Error(`unexpected answer of a schedule script: ${JSON.stringify([status, record])}`);
  }
}

/**
 * `CLIENT SETNAME` of the schedule subscriber: `fleetcron-watch:<channel>`, with every
 * character a connection name may not hold (space, newline, non-ASCII) as `_`.
 */
export function scheduleWatchConnectionName(channel: string): string {
  return `fleetcron-watch:${channel}`.replace(/[^!-~]/g, '_');
}
