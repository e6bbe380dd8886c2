import {
  type AuditEntry,
  type AuditQuery,
  type AuditStore,
  type FleetStore,
  isFleetcronError,
  type JsonObject,
  type ScheduleDefinition,
  type ScheduleStore,
  type Store,
} from '@fleetcron/core';
import { hasFleetControl, hasSchedules, keepsAudit } from '@fleetcron/core/backend';
import { expect } from 'vitest';
import type { StoreFixture } from '../types.js';
import { using } from '../util.js';

/** Options of `runAuditConformance`: a store that keeps an audit log. */
export interface AuditConformanceOptions {
  /** Backend name, used in test titles: `${name} audit conformance`. */
  name: string;
  /**
   * Makes a fresh, isolated namespace. Its `newStore()` clients must keep an audit log
   * (`listAudit`), have fleet control and stored schedules, and be made with
   * `audit: { maxEntries }` of {@link maxEntries}.
   */
  create(): Promise<StoreFixture>;
  /** The `audit.maxEntries` the fixture's stores were made with: 30 to 1000 (40 suggested). */
  maxEntries: number;
  /** Multiplies the suite's deadlines for slow backends. Default 1. */
  timeScale?: number;
}

/** One audit scenario. */
export interface AuditScenario {
  title: string;
  timeoutMs: number;
  run(options: AuditConformanceOptions): Promise<void>;
}

/** A store with everything the audit scenarios drive. */
export type AuditedStore = Store & FleetStore & ScheduleStore & AuditStore;

/** Tolerance between the store's clock and this process's, ms (same machine in the suite). */
const CLOCK_TOLERANCE_MS = 5_000;

/** The store as an audited one; fails naming what it lacks otherwise. */
function auditedStore(store: Store): AuditedStore {
  const lacks = [
    keepsAudit(store) ? null : 'listAudit (AuditStore)',
    hasFleetControl(store) ? null : 'fleet control (FleetStore)',
    hasSchedules(store) ? null : 'stored schedules (ScheduleStore)',
  ].filter((x) => x !== null);
  if (lacks.length > 0) {
    throw new Error(`the store lacks ${lacks.join(', ')}: the audit suite needs all three`);
  }
  return store as AuditedStore;
}

async function withAudited(
  options: AuditConformanceOptions,
  body: (one: AuditedStore, two: AuditedStore) => Promise<void>,
): Promise<void> {
  if (!Number.isSafeInteger(options.maxEntries) || options.maxEntries < 30) {
    throw new Error('runAuditConformance: maxEntries must be an integer of at least 30');
  }
  await using(options.create, async (fixture) => {
    const one = auditedStore(await fixture.newStore());
    const two = auditedStore(await fixture.newStore());
    await body(one, two);
  });
}

/** Reads the whole log (newest first), page by page. */
export async function readAudit(
  store: AuditStore,
  query: Omit<AuditQuery, 'cursor'> = {},
): Promise<AuditEntry[]> {
  const all: AuditEntry[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 10_000; page++) {
    const result = await store.listAudit({ ...query, cursor });
    all.push(...result.entries);
    cursor = result.nextCursor;
    if (!cursor) return all;
  }
  throw new Error('listAudit never ended');
}

const definition = (enabled = true): ScheduleDefinition => ({
  handler: 'conformance.audit',
  trigger: { kind: 'every', ms: 3_600_000, anchor: 0 },
  data: { tenant: 'acme' },
  enabled,
  options: {},
});

/** What an entry must hold besides `id` and `at`. */
function expected(fields: Partial<AuditEntry> & Pick<AuditEntry, 'action' | 'job'>) {
  return {
    by: null,
    note: null,
    requestId: null,
    schedule: null,
    version: null,
    details: null,
    ...fields,
  };
}

/** The entries' fields without `id` and `at` (compared as the records the store appended). */
function records(entries: AuditEntry[]) {
  return entries.map(({ id: _id, at: _at, ...rest }) => rest);
}

/** The error `promise` rejects with, or fails when it resolves. */
async function rejection(promise: Promise<unknown>, what: string): Promise<unknown> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  if (error === null) throw new Error(`${what}: expected an error, it resolved`);
  return error;
}

/**
 * Audit scenario 1: every mutation leaves exactly one entry with who, when, what and why,
 * newest first, read the same from another client.
 */
export const auditEveryMutation: AuditScenario = {
  title: 'every pause, resume, run request and schedule write leaves exactly one entry',
  timeoutMs: 30_000,
  async run(options) {
    await withAudited(options, async (one, two) => {
      expect((await one.listAudit()).entries, 'a fresh namespace has no audit').toEqual([]);
      const startedAt = Date.now();
      await one.setPaused('billing', true, { by: 'alice', note: 'deploy 1.2 ⏳\nsee #42' });
      await one.setPaused('billing', false, { by: 'bob' });
      await two.setPaused('billing', true);
      const request = await one.requestRun({
        job: 'billing',
        requestedBy: 'carol',
        note: 'rerun for 2026-01-01',
        data: { day: '2026-01-01' },
      });
      const plain = await two.requestRun({ job: 'report', requestedBy: 'cli' });
      const id = 'tenant/acme';
      const created = await one.createSchedule(id, definition(), { by: 'dave', note: 'new' });
      const updated = await one.replaceSchedule(
        id,
        { ...definition(), trigger: { kind: 'every', ms: 60_000, anchor: 0 } },
        { by: 'erin', expectedVersion: created.version },
      );
      const disabled = await two.replaceSchedule(id, definition(false), {
        by: 'frank',
        note: 'holiday',
        expectedVersion: updated.version,
        action: 'schedule.disable',
      });
      const enabled = await one.replaceSchedule(id, definition(true), {
        by: 'grace',
        expectedVersion: disabled.version,
        action: 'schedule.enable',
      });
      const removed = await one.removeSchedule(id, { by: 'heidi', expectedVersion: null });
      const finishedAt = Date.now();

      const job = `schedule:${id}`;
      const details = (trigger: JsonObject, on: boolean) => ({
        handler: 'conformance.audit',
        enabled: on,
        trigger,
      });
      const hourly: JsonObject = { kind: 'every', ms: 3_600_000, anchor: 0 };
      const minutely: JsonObject = { kind: 'every', ms: 60_000, anchor: 0 };
      const oldestFirst = [
        expected({ action: 'pause', job: 'billing', by: 'alice', note: 'deploy 1.2 ⏳\nsee #42' }),
        expected({ action: 'resume', job: 'billing', by: 'bob' }),
        expected({ action: 'pause', job: 'billing' }),
        expected({
          ...{ action: 'run', job: 'billing', by: 'carol', note: 'rerun for 2026-01-01' },
          requestId: request.id,
        }),
        expected({ action: 'run', job: 'report', by: 'cli', requestId: plain.id }),
        expected({
          ...{ action: 'schedule.create', job, by: 'dave', note: 'new', schedule: id },
          ...{ version: created.version, details: details(hourly, true) },
        }),
        expected({
          ...{ action: 'schedule.update', job, by: 'erin', schedule: id },
          ...{ version: updated.version, details: details(minutely, true) },
        }),
        expected({
          ...{ action: 'schedule.disable', job, by: 'frank', note: 'holiday', schedule: id },
          ...{ version: disabled.version, details: details(hourly, false) },
        }),
        expected({
          ...{ action: 'schedule.enable', job, by: 'grace', schedule: id },
          ...{ version: enabled.version, details: details(hourly, true) },
        }),
        expected({
          ...{ action: 'schedule.remove', job, by: 'heidi', schedule: id },
          ...{ version: removed.version, details: details(hourly, true) },
        }),
      ];
      for (const [name, store] of [
        ['the writing client', one],
        ['another client', two],
      ] as const) {
        const entries = await readAudit(store);
        expect(records(entries), `${name}: one entry per mutation, newest first`).toEqual(
          [...oldestFirst].reverse(),
        );
        expect(new Set(entries.map((e) => e.id)).size, 'ids are unique').toBe(entries.length);
        for (const entry of entries) {
          expect(typeof entry.id, 'id is a string').toBe('string');
          expect(
            entry.at,
            `entry ${entry.action} stamped by the store's clock, now`,
          ).toBeGreaterThanOrEqual(startedAt - CLOCK_TOLERANCE_MS);
          expect(entry.at).toBeLessThanOrEqual(finishedAt + CLOCK_TOLERANCE_MS);
        }
        const times = entries.map((e) => e.at);
        expect(times, 'newest first: times never increase').toEqual(
          [...times].sort((a, b) => b - a),
        );
      }
    });
  },
};

/** Audit scenario 2: a mutation that fails or is refused leaves no entry; a race leaves one. */
export const auditFailedLeavesNone: AuditScenario = {
  title: 'a failed or refused mutation leaves no entry; of two racing writers only the winner',
  timeoutMs: 30_000,
  async run(options) {
    await withAudited(options, async (one, two) => {
      const id = 'race';
      const created = await one.createSchedule(id, definition(), { by: 'alice' });
      const count = async () => (await readAudit(one)).length;
      expect(await count()).toBe(1);

      const failures: [string, () => Promise<unknown>, string][] = [
        [
          'a stale replaceSchedule',
          () =>
            one.replaceSchedule(id, definition(false), {
              ...{ by: 'mallory', note: 'stale' },
              expectedVersion: created.version + 5,
            }),
          'SCHEDULE_CONFLICT',
        ],
        [
          'a stale removeSchedule',
          () => one.removeSchedule(id, { by: 'mallory', expectedVersion: created.version + 5 }),
          'SCHEDULE_CONFLICT',
        ],
        [
          'createSchedule of an existing id',
          () => one.createSchedule(id, definition(), { by: 'mallory' }),
          'DUPLICATE_SCHEDULE',
        ],
        [
          'replaceSchedule of an unknown id',
          () => one.replaceSchedule('never', definition(), { by: 'mallory', expectedVersion: 1 }),
          'UNKNOWN_SCHEDULE',
        ],
        [
          'a pause with a 1,001-character note',
          () => one.setPaused('billing', true, { by: 'mallory', note: 'n'.repeat(1_001) }),
          'INVALID_OPTION',
        ],
        [
          'a pause by a 201-character name',
          () => one.setPaused('billing', true, { by: 'm'.repeat(201) }),
          'INVALID_OPTION',
        ],
        [
          'a run request with an ESC in its note',
          () =>
            one.requestRun({ job: 'billing', requestedBy: 'mallory', note: 'a\u001b]0;x\u0007' }),
          'INVALID_OPTION',
        ],
        [
          'a schedule write with a 1,001-character note',
          () =>
            one.replaceSchedule(id, definition(), {
              ...{ by: 'mallory', note: 'n'.repeat(1_001) },
              expectedVersion: created.version,
            }),
          'INVALID_OPTION',
        ],
      ];
      for (const [what, attempt, code] of failures) {
        const error = await rejection(attempt(), what);
        expect(isFleetcronError(error, code as never), `${what}: ${String(error)}`).toBe(true);
        expect(await count(), `${what} leaves no audit entry`).toBe(1);
      }
      expect((await one.getJobState('billing')).paused, 'a refused pause pauses nothing').toBe(
        false,
      );
      expect(
        await one.takeRunRequests(['billing'], 'conformance'),
        'a refused run request stores nothing',
      ).toEqual([]);

      // two writers from the same version: one wins, one entry
      const results = await Promise.allSettled([
        one.replaceSchedule(id, definition(false), { by: 'w1', expectedVersion: created.version }),
        two.replaceSchedule(id, definition(false), { by: 'w2', expectedVersion: created.version }),
      ]);
      const won = results.filter((r) => r.status === 'fulfilled');
      expect(won, 'exactly one writer wins').toHaveLength(1);
      const entries = await readAudit(two);
      expect(entries, 'the winner alone has an entry').toHaveLength(2);
      const winner = won[0]!.value;
      expect(entries[0]).toMatchObject({
        ...{ action: 'schedule.update', by: winner.updatedBy },
        ...{ schedule: id, version: winner.version },
      });
    });
  },
};

/** Audit scenario 3: newest-first paging with a cursor; filters by job, action and time. */
export const auditPaging: AuditScenario = {
  title: 'listAudit pages newest first by cursor (25 → 10, 10, 5) and filters job, action, before',
  timeoutMs: 30_000,
  async run(options) {
    await withAudited(options, async (one, two) => {
      for (let i = 0; i < 25; i++) {
        const job = i % 2 === 0 ? 'even' : 'odd';
        if (i % 5 === 4) await one.requestRun({ job, requestedBy: 'pager', note: `n${i}` });
        else await one.setPaused(job, i % 3 !== 0, { by: 'pager', note: `n${i}` });
      }
      const newestFirst = Array.from({ length: 25 }, (_, i) => `n${24 - i}`);
      const sizes: number[] = [];
      const notes: string[] = [];
      let cursor: string | null = null;
      do {
        const page = await two.listAudit({ limit: 10, cursor });
        sizes.push(page.entries.length);
        notes.push(...page.entries.map((e) => e.note ?? ''));
        cursor = page.nextCursor;
        expect(sizes.length, 'paging ends').toBeLessThanOrEqual(3);
      } while (cursor);
      expect(sizes).toEqual([10, 10, 5]);
      expect(notes, 'newest first, no entry twice or missing').toEqual(newestFirst);
      expect((await one.listAudit({ limit: 25 })).nextCursor, 'no cursor on the last page').toBe(
        null,
      );
      expect((await one.listAudit()).entries, 'the default page holds 100').toHaveLength(25);

      const odd = await readAudit(one, { job: 'odd', limit: 4 });
      expect(odd.map((e) => e.note)).toEqual(newestFirst.filter((n) => Number(n.slice(1)) % 2));
      const runs = await readAudit(one, { action: 'run', limit: 2 });
      expect(runs.map((e) => e.note)).toEqual(['n24', 'n19', 'n14', 'n9', 'n4']);
      const evenRuns = await readAudit(one, { job: 'even', action: ['run', 'resume'] });
      const all = await readAudit(one);
      const expectedEvenRuns = all.filter(
        (e) => e.job === 'even' && (e.action === 'run' || e.action === 'resume'),
      );
      expect(evenRuns.map((e) => e.id)).toEqual(expectedEvenRuns.map((e) => e.id));
      expect(evenRuns.length, 'the filter keeps some and drops some').toBeGreaterThan(0);
      expect(evenRuns.length).toBeLessThan(13);

      const before = all[10]!.at;
      const older = await readAudit(one, { before, limit: 7 });
      expect(
        older.map((e) => e.id),
        'before: exactly the entries stored before it',
      ).toEqual(all.filter((e) => e.at < before).map((e) => e.id));
      expect(
        await readAudit(one, { before: all.at(-1)!.at }),
        'nothing is before the first',
      ).toEqual([]);

      const garbage = ['not a cursor!', Buffer.from('["s","x"]').toString('base64url')];
      const bad: [string, AuditQuery][] = [
        ...garbage.map((c): [string, AuditQuery] => [`cursor ${c}`, { cursor: c }]),
        ['limit 0', { limit: 0 }],
        ['limit 1.5', { limit: 1.5 }],
        ['limit 1001', { limit: 1_001 }],
        ['action PAUSE!', { action: 'PAUSE!' as never }],
        ['before NaN', { before: Number.NaN }],
      ];
      for (const [what, query] of bad) {
        const error = await rejection(one.listAudit(query), what);
        expect(isFleetcronError(error, 'INVALID_OPTION'), `${what}: ${String(error)}`).toBe(true);
      }
    });
  },
};

/** Audit scenario 4: the log is bounded to `maxEntries`, the newest kept, across clients. */
export const auditBounded: AuditScenario = {
  title: 'the log keeps its newest maxEntries entries; concurrent writers each leave one',
  timeoutMs: 60_000,
  async run(options) {
    const max = options.maxEntries;
    await withAudited(options, async (one, two) => {
      // 4 concurrent writers × 5 pauses on two clients: every mutation has its entry
      const writers = Array.from({ length: 4 }, (_, w) =>
        (async () => {
          for (let i = 0; i < 5; i++) {
            await (w % 2 ? two : one).setPaused(`job-${w}`, i % 2 === 0, {
              by: `w${w}`,
              note: `${w}.${i}`,
            });
          }
        })(),
      );
      await Promise.all(writers);
      const concurrent = await readAudit(one);
      expect(
        concurrent.map((e) => e.note).sort(),
        'every concurrent mutation has one entry',
      ).toEqual(Array.from({ length: 20 }, (_, k) => `${Math.floor(k / 5)}.${k % 5}`).sort());
      for (let w = 0; w < 4; w++) {
        const mine = concurrent.filter((e) => e.by === `w${w}`).map((e) => e.note);
        expect(mine, `writer ${w}'s entries newest first`).toEqual(
          [4, 3, 2, 1, 0].map((i) => `${w}.${i}`),
        );
      }
      // then maxEntries + 7 more: the 20 above and the 7 oldest of these are pruned
      const extra = max + 7;
      for (let i = 0; i < extra; i++) {
        await (i % 2 ? two : one).setPaused('bounded', i % 2 === 0, { by: 'b', note: `b${i}` });
      }
      const kept = await readAudit(two, { limit: 1_000 });
      expect(
        kept.map((e) => e.note),
        `${20 + extra} mutations keep exactly the newest maxEntries = ${max}`,
      ).toEqual(Array.from({ length: max }, (_, k) => `b${extra - 1 - k}`));
    });
  },
};

/** Every audit scenario, in the order `runAuditConformance` registers them. */
export const auditScenarios = {
  auditEveryMutation,
  auditFailedLeavesNone,
  auditPaging,
  auditBounded,
} as const satisfies Record<string, AuditScenario>;
