import { describe, expect, it } from 'vitest';
import { type FleetInstanceModule, fleetScenarios } from '../src/index.js';
import { memoryLockFixture } from './memory-fixture.js';

/** A mutant of ./fleet/leader-shard-mutants.ts by export name. */
const mutant = (exportName: string): FleetInstanceModule => ({
  url: new URL('./fleet/leader-shard-mutants.ts', import.meta.url).href,
  exportName,
});

/** Each leader-mode / sharded-fire scenario, its mutant, and how it must report it. */
const cases: [keyof typeof fleetScenarios, string, RegExp][] = [
  ['leaderKilledAndFrozen', 'everyoneLeadsEveryClaimWins', /fires that ran more than once/],
  ['shardsExactlyOnceAndSpread', 'partsOnOne', /not spread within the bound/],
  ['eachJoinAndLeave', 'eachAsPlain', /runs missing on instances live at the fire/],
];

describe('the leader-mode and sharded-fire scenarios fail a fleet with that safeguard broken', () => {
  for (const [name, exportName, message] of cases) {
    it(`${exportName}: "${fleetScenarios[name].title}" fails`, async () => {
      await expect(
        fleetScenarios[name].run({
          name: exportName,
          create: memoryLockFixture(),
          instance: mutant(exportName),
        }),
      ).rejects.toThrow(message);
    }, 180_000);
  }
});

describe('the leader-mode scenarios need an elector', () => {
  it('a fixture without newElector fails them, saying what to add', async () => {
    const withElector = memoryLockFixture();
    const create = async () => {
      const { newElector: _none, ...fixture } = await withElector();
      return fixture;
    };
    await expect(
      fleetScenarios.leaderKilledAndFrozen.run({ name: 'no elector', create }),
    ).rejects.toThrow(/the fixture has no newElector\(\)/);
  });
});
