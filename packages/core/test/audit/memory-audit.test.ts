import { describe, expect, it } from 'vitest';
import {
  AUDIT_PRUNE_BATCH,
  DEFAULT_AUDIT_MAX_AGE_MS,
  DEFAULT_AUDIT_MAX_ENTRIES,
  encodeAuditCursor,
  MemoryAudit,
  pauseAuditRecord,
} from '../../src/audit/index.js';
import { FakeClock } from '../../src/fake-clock.js';
import { every, MemoryLock, Scheduler } from '../../src/index.js';
import { MemoryStore } from '../../src/memory-store.js';

const START = Date.UTC(2026, 0, 1);
const DAY = 24 * 60 * 60 * 1000;

describe('MemoryAudit bounds', () => {
  it('states its defaults: 100,000 entries, 90 days, at most 20 deleted per append', () => {
    expect(DEFAULT_AUDIT_MAX_ENTRIES).toBe(100_000);
    expect(DEFAULT_AUDIT_MAX_AGE_MS).toBe(90 * DAY);
    expect(AUDIT_PRUNE_BATCH).toBe(20);
  });

  it('prunes entries older than maxAgeMs on the store clock, at most AUDIT_PRUNE_BATCH per append', async () => {
    const clock = new FakeClock(START);
    const log = new MemoryAudit(clock, { maxAgeMs: 7 * DAY });
    for (let i = 0; i < 30; i++) log.append(pauseAuditRecord('job', true, { note: `old ${i}` }));
    expect((await log.listAudit()).entries).toHaveLength(30);
    await clock.advance(7 * DAY + 1);
    log.append(pauseAuditRecord('job', true, { note: 'new 1' }));
    const afterOne = (await log.listAudit()).entries.map((e) => e.note);
    expect(afterOne, 'one append deletes 20 of the 30 expired entries, oldest first').toEqual([
      'new 1',
      ...Array.from({ length: 10 }, (_, k) => `old ${29 - k}`),
    ]);
    log.append(pauseAuditRecord('job', true, { note: 'new 2' }));
    expect((await log.listAudit()).entries.map((e) => e.note)).toEqual(['new 2', 'new 1']);
    expect((await log.listAudit()).entries[0]!.at, 'stamped by the store clock').toBe(
      START + 7 * DAY + 1,
    );
  });

  it('keeps the newest maxEntries', async () => {
    const log = new MemoryAudit(new FakeClock(START), { maxEntries: 3 });
    for (let i = 0; i < 10; i++) log.append(pauseAuditRecord('job', i % 2 === 0, { note: `${i}` }));
    expect((await log.listAudit()).entries.map((e) => e.note)).toEqual(['9', '8', '7']);
  });

  it('refuses a cursor of another store (an id that is not its sequence) with a typed error', async () => {
    const log = new MemoryAudit(new FakeClock(START));
    log.append(pauseAuditRecord('job', true, {}));
    const cursor = encodeAuditCursor('not-a-seq');
    await expect(log.listAudit({ cursor })).rejects.toMatchObject({
      code: 'INVALID_OPTION',
      field: 'cursor',
    });
  });

  it('refuses bad bounds with a typed error naming the option', () => {
    for (const audit of [{ maxEntries: 0 }, { maxAgeMs: -1 }, { maxEntries: 1.5 }]) {
      expect(() => new MemoryStore({ audit })).toThrow(
        expect.objectContaining({
          code: 'INVALID_OPTION',
          field: expect.stringMatching(/^audit\./),
        }),
      );
    }
  });
});

describe('Scheduler.pause / resume and the audit log', () => {
  it('keeps who and the note of a pause and a resume made through the Scheduler', async () => {
    const clock = new FakeClock(START);
    const store = new MemoryStore({ clock });
    const scheduler = new Scheduler({ lock: new MemoryLock({ clock }), store, clock });
    scheduler.add({ name: 'export', trigger: every(60_000), run: () => {} });
    await scheduler.pause('export', { by: 'ops:alice', note: 'upstream down' });
    await scheduler.resume('export', { by: 'ops:bob' });
    const entries = (await store.listAudit({ job: 'export' })).entries;
    expect(entries.map((e) => [e.action, e.by, e.note ?? null])).toEqual([
      ['resume', 'ops:bob', null],
      ['pause', 'ops:alice', 'upstream down'],
    ]);
  });
});
