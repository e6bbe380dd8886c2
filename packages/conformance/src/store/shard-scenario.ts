import { type Execution, groupFires } from '@fleetcron/core';
import { expect } from 'vitest';
import type { StoreScenario } from '../types.js';
import { using } from '../util.js';

const JOB = 'sharded job ✓';
const BASE = Date.UTC(2026, 0, 4);

/** A `running` execution of {@link JOB} (a sharded one when `over.shard` is given). */
function row(over: Partial<Execution> & { id: string }): Execution {
  return {
    ...{ job: JOB, fireAt: BASE, status: 'running' as const, attempt: 1, instanceId: 'i-a' },
    ...{ token: 7, startedAt: BASE + 10, finishedAt: null, error: null, reason: null },
    requestedBy: null,
    ...over,
  };
}

/**
 * Store scenario (sharded fires, issue 16): `Execution.shard` is kept and returned, through
 * another client, for parts of a `shards: n` fire and for a `shards: 'each'` run; it survives
 * the outcome write and the status filter; a plain fire has none; a malformed shard is a typed
 * `INVALID_OPTION` naming `shard`.
 */
export const shardKept: StoreScenario = {
  title: 'Execution.shard is kept and returned (parts, each, plain); a bad shard is typed',
  timeoutMs: 30_000,
  async run(options) {
    await using(options.create, async (fixture) => {
      const writer = await fixture.newStore();
      const reader = await fixture.newStore();
      await writer.record(row({ id: 'part-0', shard: { index: 0, count: 3 } }));
      await writer.record(
        row({ id: 'part-2', shard: { index: 2, count: 3 }, startedAt: BASE + 12 }),
      );
      await writer.record(
        row({
          ...{ id: 'each-b', instanceId: 'i-b', fireAt: BASE - 1_000, startedAt: BASE - 995 },
          shard: { index: 1, count: 2, each: true },
        }),
      );
      await writer.record(
        row({
          ...{ id: 'plain', fireAt: BASE - 2_000, startedAt: BASE - 1_999 },
          ...{ status: 'succeeded', finishedAt: BASE - 1_991 },
        }),
      );
      await writer.record(
        row({
          ...{ id: 'part-0', shard: { index: 0, count: 3 } },
          ...{ status: 'succeeded', finishedAt: BASE + 50 },
        }),
      );

      const { executions } = await reader.history(JOB);
      const byId = new Map(executions.map((e) => [e.id, e]));
      expect(byId.get('part-0'), 'the outcome of part 0 keeps its shard').toMatchObject({
        status: 'succeeded',
        shard: { index: 0, count: 3 },
      });
      expect(byId.get('part-2')?.shard, 'part 2 of 3').toEqual({ index: 2, count: 3 });
      expect(byId.get('each-b')?.shard, "a shards: 'each' run").toEqual({
        index: 1,
        count: 2,
        each: true,
      });
      expect(byId.get('plain')?.shard ?? null, 'a plain fire has no shard').toBeNull();
      const succeeded = await reader.history(JOB, { status: 'succeeded' });
      expect(
        succeeded.executions.map((e) => [e.id, e.shard ?? null]),
        'history({ status }) keeps shards',
      ).toEqual([
        ['part-0', { index: 0, count: 3 }],
        ['plain', null],
      ]);
      expect(
        groupFires(executions).map((f) => [f.kind, f.executions.map((e) => e.id)]),
        'groupFires over the history read back',
      ).toEqual([
        ['parts', ['part-0', 'part-2']],
        ['each', ['each-b']],
        ['single', ['plain']],
      ]);
      await expect(
        writer.record(row({ id: 'bad', shard: { index: 3, count: 3 } })),
        'a shard index out of range',
      ).rejects.toMatchObject({ code: 'INVALID_OPTION', field: 'shard' });
    });
  },
};
