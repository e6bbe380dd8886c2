import { type Execution, MemoryStore } from '@fleetcron/core';

/**
 * Store whose `record()` drops `Execution.shard` (it keeps every other field), as a store
 * written before sharded fires would: parts of a fire read back as plain fires.
 */
export class DropsShard extends MemoryStore {
  override async record(execution: Execution): Promise<void> {
    const { shard: _dropped, ...rest } = execution;
    await super.record(rest);
  }
}
