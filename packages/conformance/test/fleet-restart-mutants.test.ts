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
    it(`pass on MemoryLock: "${restartManyScenarios[name].title}"`, async () => {
      await restartManyScenarios[name].run({ name: 'memory', create: memoryLockFixture() });
      expect(restartManyScenarios[name].title).toContain('restarted together');
    }, 180_000);
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
