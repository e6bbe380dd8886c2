import { describe, expect, it } from 'vitest';
import { restartManyScenarios } from '../src/fleet/restart-many-scenarios.js';
import type { FleetInstanceModule } from '../src/index.js';
import { memoryLockFixture } from './memory-fixture.js';

/** A mutant of ./fleet/restart-mutants.ts by export name. */
const mutant = (exportName: string): FleetInstanceModule => ({
  url: new URL('./fleet/restart-mutants.ts', import.meta.url).href,
  exportName,
});

describe('the many-jobs restart scenarios (4 processes × 2,000 jobs, SIGKILLed and restarted together)', () => {
  for (const name of ['restartManyJobsLockOnly', 'restartManyJobsWithStore'] as const) {
    // Issue #25, open: beside a full CI run the store-on one sometimes leaves a few missed fires
    // unrecorded (27 of 2,000 in CI at 8216a63): the hold of the first regular fire (one lease)
    // ran out before the catch-up pass's later steps, and the regular claim moved the mark past
    // them. Sending the held catch-up claims early (tried in d5a5eaf) sent 6,917 catch-up claims
    // instead of 2,408 and made 1,532 later fires fail; reverted. One retry, reported by vitest,
    // until #25 makes the pass fast enough: each try must pass whole. Since the catch-up claim
    // ring (7f66b5a) the pass ends within ~0.7 s of the restart instead of ~4.5 s, and this
    // scenario passed at the first try in CI at 0748ea3 and in 6 of 6 runs alone or beside 2-4
    // busy loops (2026-12-07). CI at 6a679b0 failed it twice in a row (one retry): beside the
    // rest of the run the pass outlived the hold again. Since then a job still waiting a lease
    // after its regular fire is expedited (decided at once) instead of released to the regular
    // claim, and a held fire due when the pass ends waits for the caught-up fires' lease: take
    // the retry out once a few more CI runs agree.
    const retry = name === 'restartManyJobsWithStore' ? 1 : 0;
    it(`pass on MemoryLock: "${restartManyScenarios[name].title}"`, {
      retry,
      timeout: 180_000,
    }, async () => {
      await restartManyScenarios[name].run({ name: 'memory', create: memoryLockFixture() });
      expect(restartManyScenarios[name].title).toContain('restarted together');
    });
  }

  it('busyAfterCatchUp (the regular claim after a catch-up claim answered busy) fails the lock-only one', async () => {
    await expect(
      restartManyScenarios.restartManyJobsLockOnly.run({
        name: 'busyAfterCatchUp',
        create: memoryLockFixture(),
        instance: mutant('busyAfterCatchUp'),
      }),
    ).rejects.toThrow(/fires after the restart never started/);
  }, 180_000);

  it('droppingOutcomesAfterCatchUp (outcome rows shed after the catch-up) fails the store-on one', async () => {
    await expect(
      restartManyScenarios.restartManyJobsWithStore.run({
        name: 'droppingOutcomesAfterCatchUp',
        create: memoryLockFixture(),
        instance: mutant('droppingOutcomesAfterCatchUp'),
      }),
    ).rejects.toThrow(/have no single succeeded row/);
  }, 180_000);
});
