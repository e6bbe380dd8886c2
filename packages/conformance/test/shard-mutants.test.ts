import { MemoryStore } from '@fleetcron/core';
import { describe, expect, it } from 'vitest';
import { storeScenarios } from '../src/index.js';
import { memoryStoreFixture } from './memory-fixture.js';
import { DropsShard } from './mutants/shard-mutants.js';

describe('the shard store scenario', () => {
  it('a store that drops Execution.shard: the scenario fails', async () => {
    const create = memoryStoreFixture(() => new DropsShard());
    await expect(storeScenarios.shardKept.run({ name: 'drops shard', create })).rejects.toThrow(
      /the outcome of part 0 keeps its shard/,
    );
  });

  it('passes on the reference MemoryStore', async () => {
    const create = memoryStoreFixture(() => new MemoryStore());
    await storeScenarios.shardKept.run({ name: 'memory', create });
    expect(storeScenarios.shardKept.title).toContain('Execution.shard');
  });
});
