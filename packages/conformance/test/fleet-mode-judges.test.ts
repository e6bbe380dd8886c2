import { describe, expect, it } from 'vitest';
import { duplicateFires, missedFires, termViolations } from '../src/fleet/leader-judge.js';
import type { LedgerEntry } from '../src/fleet/ledger.js';
import {
  claimsInFlight,
  claimsNotStarted,
  openRuns,
  partsLostToKill,
  partViolations,
  spreadViolation,
} from '../src/fleet/shard-judge.js';

let mono = 0;
/** A ledger line with the boilerplate filled in (`mono` increases line by line). */
const line = (
  entry: Partial<LedgerEntry> & Pick<LedgerEntry, 'kind' | 'instance'>,
): LedgerEntry => ({
  mono: ++mono,
  wall: 0,
  pid: 1,
  ...entry,
});
const start = (instance: string, fireAt: number, shard?: LedgerEntry['shard']) =>
  line({ kind: 'start', instance, fireAt, job: 'j', token: fireAt, ...(shard ? { shard } : {}) });
const elected = (instance: string, term: number) =>
  line({ kind: 'leader', instance, term, isLeader: true });

describe('leader-mode judgements', () => {
  it('a fire started twice is a duplicate; once is not', () => {
    expect(duplicateFires([start('a', 1000), start('b', 2000)])).toEqual([]);
    expect(duplicateFires([start('a', 1000), start('b', 1000)])).toEqual([
      expect.stringContaining('started 2 times: a token 1000, b token 1000'),
    ]);
  });

  it('a fire missed outside every takeover window is reported; inside one it is allowed', () => {
    const starts = [start('a', 1000), start('a', 3000)];
    const input = { starts, first: 1000, last: 3000, everyMs: 1000 };
    expect(missedFires({ ...input, windows: [] })).toEqual([expect.stringContaining('never ran')]);
    expect(missedFires({ ...input, windows: [{ what: 'SIGKILL', from: 1500, to: 2500 }] })).toEqual(
      [],
    );
  });

  it('terms must strictly increase in election order, and a lost term must have been elected', () => {
    expect(termViolations([elected('a', 1), elected('b', 2)])).toEqual([]);
    expect(termViolations([elected('a', 2), elected('b', 2)])).toEqual([
      expect.stringContaining('terms must strictly increase'),
    ]);
    const lost = line({ kind: 'leader', instance: 'a', term: 7, isLeader: false });
    expect(termViolations([elected('a', 1), lost])).toEqual([
      expect.stringContaining('never elected with'),
    ]);
  });
});

describe('sharded-fire judgements', () => {
  const part = (instance: string, index: number) => start(instance, 1000, { index, count: 4 });

  it('every part exactly once: a missing and a doubled part are reported', () => {
    const all = [part('a', 0), part('a', 1), part('b', 2), part('b', 3)];
    expect(partViolations(all, [1000], 4)).toEqual([]);
    const bad = [part('a', 0), part('a', 1), part('b', 1), part('b', 3)];
    expect(partViolations(bad, [1000], 4)).toEqual([
      expect.stringContaining('part 1/4 started 2 times'),
      expect.stringContaining('part 2/4 started 0 times'),
    ]);
  });

  it('the spread bound: more than ⌈n/live⌉ + 1 parts while another live instance ran none', () => {
    const even = [part('a', 0), part('a', 1), part('b', 2), part('b', 3)];
    expect(spreadViolation(even, 1000, 4, ['a', 'b', 'c'])).toBeNull();
    const piled = [part('a', 0), part('a', 1), part('a', 2), part('a', 3)];
    expect(spreadViolation(piled, 1000, 4, ['a', 'b', 'c'])).toContain('ran none');
    // within the bound (⌈4/3⌉ + 1 = 3) although b ran none
    const three = [part('a', 0), part('a', 1), part('a', 2), part('c', 3)];
    expect(spreadViolation(three, 1000, 4, ['a', 'b', 'c'])).toBeNull();
  });

  it('a run that started and never ended is open', () => {
    const ended = line({
      kind: 'end',
      instance: 'a',
      fireAt: 1000,
      job: 'j',
      shard: { index: 0, count: 4 },
    });
    const runs = [part('a', 0), ended, part('a', 1)];
    expect(openRuns(runs, 'a').map((e) => e.shard?.index)).toEqual([1]);
  });

  it("a claim with no answer yet is in flight; an answered one, or another instance's, is not", () => {
    const claim = (instance: string, fireAt: number, job: string) =>
      line({ kind: 'claim', instance, fireAt, job });
    const claimed = (instance: string, fireAt: number, job: string) =>
      line({ kind: 'claimed', instance, fireAt, job, status: 'won', token: 1 });
    const entries = [
      claim('a', 100, 'jpart0/4'),
      claimed('a', 100, 'jpart0/4'),
      claim('a', 200, 'jpart0/4'),
      claim('a', 200, 'jpart1/4'),
      claimed('a', 200, 'jpart1/4'),
      claim('b', 300, 'jpart0/4'),
    ];
    const inFlight = claimsInFlight(entries, 'a').map((e) => `${e.job} ${e.fireAt}`);
    expect(inFlight).toEqual(['jpart0/4 200']);
    expect(claimsInFlight([...entries, claimed('a', 200, 'jpart0/4')], 'a')).toEqual([]);
  });

  it('a won part not started yet, or a claim in flight, counts as not started; a started one does not', () => {
    const claimed = (fireAt: number, job: string, status = 'won') =>
      line({ kind: 'claimed', instance: 'a', fireAt, job, status, token: 1 });
    const entries = [
      line({ kind: 'claim', instance: 'a', fireAt: 100, job: 'jpart0/4' }),
      line({ kind: 'claim', instance: 'a', fireAt: 100, job: 'jpart1/4' }),
      claimed(100, 'jpart0/4'),
      claimed(100, 'jpart1/4'),
      start('a', 100, { index: 0, count: 4 }),
      line({ kind: 'claim', instance: 'a', fireAt: 200, job: 'jpart0/4' }),
      claimed(200, 'jpart0/4', 'lost/claimed'),
    ];
    expect(claimsNotStarted(entries, 'a')).toEqual([100]);
    expect(claimsNotStarted([...entries, start('a', 100, { index: 1, count: 4 })], 'a')).toEqual(
      [],
    );
    const inFlight = line({ kind: 'claim', instance: 'a', fireAt: 300, job: 'jpart0/4' });
    expect(claimsNotStarted([...entries, inFlight], 'a')).toEqual([100, 300]);
  });
  it("a part claimed just before the kill and never started is excused from 'exactly once' (missing only, never doubled)", () => {
    const key = (index: number) => `j\u001fpart\u001f${index}/4`;
    const claim = (fireAt: number, index: number) =>
      line({ kind: 'claim', instance: 'v', fireAt, job: key(index) });
    const won = (fireAt: number, index: number) =>
      line({ kind: 'claimed', instance: 'v', fireAt, job: key(index), status: 'won', token: 1 });
    const entries = [
      claim(100, 0), // long before the kill, won and never started: not excused
      won(100, 0),
      ...Array.from({ length: 20 }, () => line({ kind: 'extend', instance: 'x' })),
      claim(200, 1), // won, never started
      won(200, 1),
      claim(200, 2), // started
      won(200, 2),
      start('v', 200, { index: 2, count: 4 }),
      claim(300, 3), // in flight at the kill
    ];
    const killedAt = mono + 1;
    const lost = partsLostToKill(entries, 'v', killedAt, 10);
    expect([...lost].sort()).toEqual(['200/1', '300/3']);
    const others = [0, 2, 3].map((i) => start('a', 200, { index: i, count: 4 }));
    expect(partViolations(others, [200], 4, lost)).toEqual([]);
    expect(partViolations(others, [200], 4)).toEqual([expect.stringContaining('part 1/4')]);
    // excused means "may be missing": a part started twice is still reported
    const doubled = [...others, start('a', 200, { index: 2, count: 4 })];
    expect(partViolations(doubled, [200], 4, lost)).toEqual([expect.stringContaining('part 2/4')]);
  });
});
