import { describe, expect, it } from 'vitest';
import { accountFires, accountJobs } from '../src/accounting.js';

describe('accountFires', () => {
  it('counts a clean run: every fire exactly once', () => {
    const a = accountFires([
      { steps: 4, wins: [0, 2], errors: [] },
      { steps: 3, wins: [1], errors: [] },
      { steps: 4, wins: [3], errors: [] },
    ]);
    expect(a).toMatchObject({ fires: 4, exactlyOnce: 4, duplicates: 0, missed: 0, unresolved: 0 });
  });

  it('counts extra winners as duplicates, across groups and within one', () => {
    const a = accountFires([
      { steps: 3, wins: [0, 1, 1], errors: [] },
      { steps: 3, wins: [1, 2], errors: [] },
    ]);
    expect(a.duplicates).toBe(2); // fire 1 won three times
    expect(a.exactlyOnce).toBe(2);
    expect(a.examples.duplicate).toEqual([1]);
  });

  it('tells missed fires (nobody won, every claim answered) from unresolved ones (a claim threw)', () => {
    const a = accountFires([
      { steps: 5, wins: [0, 3], errors: [2] },
      { steps: 2, wins: [], errors: [] },
    ]);
    expect(a).toMatchObject({ fires: 5, exactlyOnce: 2, missed: 2, unresolved: 1 });
    expect(a.examples.missed).toEqual([1, 4]);
  });

  it('takes the longest group as the number of fires, and rejects impossible wins', () => {
    expect(accountFires([]).fires).toBe(0);
    expect(() => accountFires([{ steps: 2, wins: [2], errors: [] }])).toThrow(RangeError);
  });

  it('accepts typed arrays (what workers send)', () => {
    const a = accountFires([
      { steps: 3, wins: Int32Array.from([0, 1, 2]), errors: new Int32Array() },
    ]);
    expect(a.exactlyOnce).toBe(3);
  });
});

describe('accountJobs', () => {
  it('finds duplicates, missed jobs and jobs skipped because a claim failed', () => {
    const a = accountJobs(
      5,
      [
        { job: 0, instance: 0 },
        { job: 1, instance: 1 },
        { job: 1, instance: 2 },
        { job: 4, instance: 3 },
      ],
      [3, 4],
    );
    expect(a).toEqual({ jobs: 5, ran: 3, duplicates: 1, missed: 1, skippedUnavailable: 1 });
  });

  it('rejects a run of a job that does not exist', () => {
    expect(() => accountJobs(1, [{ job: 1, instance: 0 }])).toThrow(RangeError);
  });
});
