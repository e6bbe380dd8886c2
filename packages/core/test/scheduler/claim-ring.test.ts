import { describe, expect, it } from 'vitest';
import { ClaimRing } from '../../src/scheduler/catch-up/claim-ring.js';
import { seeded } from '../seeded-random.js';

const ids = (n: number) => Array.from({ length: n }, (_, i) => i);
const at = (value: number) => () => value;

describe('ClaimRing: which owed catch-up claims an instance sends next', () => {
  it('starts at its random place and runs forward, wrapping, up to the limit', () => {
    const ring = new ClaimRing(ids(10), () => 0, at(0.85)); // place 8
    expect(ring.nextRun(4).map((s) => s.entry)).toEqual([8, 9, 0, 1]);
  });

  it('a run stops at the first closed entry (another instance decided it)', () => {
    const ring = new ClaimRing(ids(10), () => 0, at(0.2)); // place 2
    ring.close(5);
    expect(ring.nextRun(6).map((s) => s.entry)).toEqual([2, 3, 4]);
  });

  it('closing the entries at the cursor moves it past them; an empty run means time to move', () => {
    const ring = new ClaimRing(ids(6), () => 0, at(0)); // place 0
    for (const { entry } of ring.nextRun(2)) ring.close(entry);
    expect(ring.nextRun(10).map((s) => s.entry)).toEqual([2, 3, 4, 5]);
    ring.close(2);
    ring.close(4); // another instance's claim lands after this one's cursor
    expect(ring.nextRun(10).map((s) => s.entry)).toEqual([3]);
    ring.close(3);
    expect(ring.nextRun(10)).toEqual([]); // the cursor is on 4, closed
    expect(ring.done).toBe(false);
    ring.moveToWidestGap();
    expect(ring.nextRun(10).map((s) => s.entry)).toEqual([5]);
  });

  it('moves into the middle half of the widest open run, not onto its edges', () => {
    const open = new Set<number>();
    for (let draw = 0; draw < 1; draw += 0.125) {
      const ring = new ClaimRing(ids(20), () => 0, at(draw));
      for (const closed of [0, 1, 2, 3, 4, 15, 16]) ring.close(closed); // widest run: 5..14
      ring.moveToWidestGap();
      const first = ring.nextRun(1)[0]?.entry as number;
      open.add(first);
      expect(first).toBeGreaterThanOrEqual(5 + Math.floor(10 * 0.25));
      expect(first).toBeLessThan(5 + Math.ceil(10 * 0.75));
    }
    expect(open.size).toBeGreaterThan(1); // the random draw spreads the landing place
  });

  it('keeps the last mark read of each entry; closeAll returns the open ones and ends the ring', () => {
    const ring = new ClaimRing(['a', 'b', 'c'], (e) => (e === 'b' ? 7 : 1), at(0));
    ring.reread('c', 9);
    expect(ring.openEntries()).toEqual([
      { entry: 'a', mark: 1 },
      { entry: 'b', mark: 7 },
      { entry: 'c', mark: 9 },
    ]);
    ring.close('a');
    expect(ring.closeAll()).toEqual(['b', 'c']);
    expect(ring.done).toBe(true);
    expect(ring.nextRun(5)).toEqual([]);
  });

  it('four instances with their own draws split 2,000 entries into arcs: done in a few steps, each claims a share', () => {
    // a simulation of the pass in lockstep (the worst case: every instance picks its step at the
    // same moment): in each round every instance takes its next run of 250 and closes it; the
    // entries another instance took before are read as decided (closed) first. One instance
    // alone needs 8 steps; a random order per instance (the pass before the ring) needed 8 each.
    for (const seed of [1, 2, 3]) {
      const random = seeded(seed);
      const rings = ids(4).map(() => new ClaimRing(ids(2000), () => 0, random));
      const claimedBy = new Map<number, number>();
      let claims = 0;
      let rounds = 0;
      for (; rounds < 100 && rings.some((r) => !r.done); rounds++) {
        const runs = rings.map((ring) => {
          for (const entry of claimedBy.keys()) ring.close(entry); // the re-read
          let run = ring.nextRun(250);
          if (run.length === 0 && !ring.done) {
            ring.moveToWidestGap();
            run = ring.nextRun(250);
          }
          return run;
        });
        runs.forEach((run, who) => {
          for (const { entry } of run) {
            rings[who]?.close(entry);
            claims++;
            if (!claimedBy.has(entry)) claimedBy.set(entry, who);
          }
        });
      }
      expect(claimedBy.size).toBe(2000);
      expect(rounds, `seed ${seed}`).toBeLessThanOrEqual(4);
      expect(claims, `seed ${seed}`).toBeLessThan(2000 * 1.35); // starts that land close overlap
      const shares = ids(4).map((who) => [...claimedBy.values()].filter((w) => w === who).length);
      for (const share of shares) expect(share, `seed ${seed}: ${shares}`).toBeGreaterThan(100);
    }
  });
});
