import { MemoryStore } from '@fleetcron/core';
import { describe, expect, it } from 'vitest';
import { storeScenarios } from '../src/index.js';
import { memoryStoreFixture } from './memory-fixture.js';
import { OverwritesOutcome } from './mutants/outcome-mutants.js';

describe('the first-outcome store scenario', () => {
  it('(s4) a terminal status overwritten by a later one: the scenario fails', async () => {
    const create = memoryStoreFixture(() => new OverwritesOutcome());
    await expect(storeScenarios.firstOutcomeWins.run({ name: 's4', create })).rejects.toThrow(
      /the first outcome wins/,
    );
  });

  it('passes on the reference MemoryStore', async () => {
    const create = memoryStoreFixture(() => new MemoryStore());
    await storeScenarios.firstOutcomeWins.run({ name: 'memory', create });
    expect(storeScenarios.firstOutcomeWins.title).toContain('first terminal status');
  });
});
