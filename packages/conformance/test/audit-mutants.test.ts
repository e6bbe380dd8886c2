import { MemoryStore, type Store } from '@fleetcron/core';
import { describe, expect, it } from 'vitest';
import { type AuditScenario, auditScenarios } from '../src/index.js';
import { memoryStoreFixture } from './memory-fixture.js';
import {
  AppendsBeforeWrite,
  CursorRepeats,
  DropsResume,
  EverythingIsUpdate,
  LosesRunNote,
  OldestFirst,
  SideLoggedReference,
  Unbounded,
} from './mutants/audit-mutants.js';

/** Each mutant breaks one rule of the audit log; the named scenario must fail with the message. */
const cases: [string, new () => Store, AuditScenario, RegExp][] = [
  [
    '(a1) appends outside the write, before it',
    AppendsBeforeWrite,
    auditScenarios.auditFailedLeavesNone,
    /a stale replaceSchedule leaves no audit entry/,
  ],
  ['(a2) drops a resume', DropsResume, auditScenarios.auditEveryMutation, /one entry per mutation/],
  [
    '(a3) loses a run note',
    LosesRunNote,
    auditScenarios.auditEveryMutation,
    /one entry per mutation/,
  ],
  [
    '(a4) enable/disable recorded as update',
    EverythingIsUpdate,
    auditScenarios.auditEveryMutation,
    /one entry per mutation/,
  ],
  [
    '(a5) never prunes',
    Unbounded,
    auditScenarios.auditBounded,
    /keep exactly the newest maxEntries/,
  ],
  [
    '(a6) a cursor repeats an entry',
    CursorRepeats,
    auditScenarios.auditPaging,
    /newest first, no entry twice/,
  ],
  ['(a7) oldest first', OldestFirst, auditScenarios.auditEveryMutation, /one entry per mutation/],
];

describe('the audit scenarios', () => {
  for (const [title, Mutant, scenario, message] of cases) {
    it(`${title}: "${scenario.title}" fails`, async () => {
      const create = memoryStoreFixture(() => new Mutant());
      await expect(scenario.run({ name: 'mutant', create, maxEntries: 40 })).rejects.toThrow(
        message,
      );
    });
  }

  for (const scenario of Object.values(auditScenarios)) {
    it(`"${scenario.title}" passes on the mutants' side-logged base and on MemoryStore`, async () => {
      for (const make of [
        () => new SideLoggedReference(),
        () => new MemoryStore({ audit: { maxEntries: 40 } }),
      ]) {
        await scenario.run({ name: 'reference', create: memoryStoreFixture(make), maxEntries: 40 });
      }
      expect(Object.keys(auditScenarios)).toHaveLength(4);
    });
  }

  it('a store without listAudit fails the suite, naming what it lacks', async () => {
    class NoAudit extends MemoryStore {}
    Object.defineProperty(NoAudit.prototype, 'listAudit', { value: undefined });
    const create = memoryStoreFixture(() => new NoAudit());
    await expect(
      auditScenarios.auditEveryMutation.run({ name: 'no audit', create, maxEntries: 40 }),
    ).rejects.toThrow(/lacks listAudit/);
  });
});
