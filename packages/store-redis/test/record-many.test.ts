import { storeScenarios } from '@fleetcron/conformance';
import { describe, expect, it } from 'vitest';
import { planRecordCalls, type RecordWrite } from '../src/record-calls.js';
import { sharedUrl, storeFixture } from './fixture.js';

// recordMany beyond the conformance suite: the trims of a batch equal those of single records
// (a small maxHistory), and how a batch is cut into script calls.

const write = (job: string, id: string): RecordWrite => ({
  job,
  keys: [`{${job}}:h`, `{${job}}:x`, `{${job}}:s`],
  args: [id],
});

describe('recordMany', () => {
  it('agrees with record on a jumbled sequence with maxHistory 3 (trims included)', async () => {
    const url = sharedUrl();
    await storeScenarios.recordManyMatchesRecord.run({
      name: 'redis maxHistory 3',
      create: async () => storeFixture(url, { maxHistory: 3 }),
    });
    expect(storeScenarios.recordManyMatchesRecord.title).toContain('agree');
  }, 120_000);

  it('packs whole jobs into calls of about 128, in batch order; on a Cluster per slot', () => {
    const writes = [
      ...Array.from({ length: 100 }, (_, i) => write('a', `a${i}`)),
      write('b', 'b0'),
      ...Array.from({ length: 50 }, (_, i) => write('c', `c${i}`)),
      write('b', 'b1'),
      ...Array.from({ length: 200 }, (_, i) => write('d', `d${i}`)),
    ];
    const single = planRecordCalls(writes, undefined);
    expect(single.map((c) => c.size)).toEqual([102, 50, 200]);
    expect(single[0]!.args.filter((a) => a.startsWith('b'))).toEqual(['b0', 'b1']);
    expect(single[0]!.keys.length).toBe(102 * 3);
    // on a Cluster: a and c share slot 1, b and d slot 2
    const slot = (w: RecordWrite) => (w.job === 'a' || w.job === 'c' ? 1 : 2);
    const cluster = planRecordCalls(writes, slot);
    expect(cluster.map((c) => [c.size, c.args[0]])).toEqual([
      [100, 'a0'],
      [2, 'b0'],
      [50, 'c0'],
      [200, 'd0'],
    ]);
  });
});
