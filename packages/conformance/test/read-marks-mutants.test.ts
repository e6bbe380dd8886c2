import { MemoryLock } from '@fleetcron/core';
import { describe, expect, it } from 'vitest';
import { type LockConformanceOptions, lockScenarios } from '../src/index.js';
import { type MemoryLockClass, memoryLockFixture } from './memory-fixture.js';
import {
  ChecksFirstChunkOnly,
  IgnoresAbortedRead,
  ShiftedMarks,
  SkewedReadTime,
  StaleMarks,
} from './mutants/read-marks-mutants.js';

const options = (Lock: MemoryLockClass): LockConformanceOptions => ({
  name: 'mutant',
  create: memoryLockFixture(Lock),
  inProcess: true,
});

const { readMarksMatchInspect } = lockScenarios;

/** Each mutant breaks one rule of readMarks; the scenario must fail naming it. */
const cases: [string, MemoryLockClass, RegExp][] = [
  [
    '(r1) stale marks (a cache claims do not update)',
    StaleMarks,
    /readMarks after a claim: marks\[i\] is inspect\(keys\[i\]\)\.mark .*"rm won"/,
  ],
  [
    '(r2) marks shifted after a repeated key',
    ShiftedMarks,
    /marks\[i\] is inspect\(keys\[i\]\)\.mark for every i \(first difference at keys\[7\]/,
  ],
  [
    '(r3) keys past the first chunk not checked',
    ChecksFirstChunkOnly,
    /a lone surrogate after 300 good keys: expected INVALID_OPTION, got no error/,
  ],
  [
    '(r4) an aborted signal ignored',
    IgnoresAbortedRead,
    /readMarks with an aborted signal: expected BACKEND_UNAVAILABLE, got no error/,
  ],
  ['(r5) backendTime a minute ahead', SkewedReadTime, /backendTime is not after the answer came/],
];

describe('the readMarks scenario fails broken mark reads', () => {
  for (const [title, Lock, message] of cases) {
    it(`${title}: "${readMarksMatchInspect.title}" fails`, async () => {
      await expect(readMarksMatchInspect.run(options(Lock))).rejects.toThrow(message);
    }, 60_000);
  }

  it('passes on the reference MemoryLock', async () => {
    await readMarksMatchInspect.run(options(MemoryLock));
    expect(new MemoryLock().readMarks).toBeTypeOf('function');
  }, 60_000);

  it('passes on a lock without readMarks, after checking that it has none', async () => {
    let seen: unknown = 'not checked';
    class NoReadMarks extends MemoryLock {
      constructor(o: ConstructorParameters<typeof MemoryLock>[0]) {
        super(o);
        Object.assign(this, { readMarks: undefined });
        seen = this.readMarks;
      }
    }
    await readMarksMatchInspect.run(options(NoReadMarks));
    expect(seen).toBeUndefined();
  }, 60_000);

  it('fails a lock whose readMarks is not a function', async () => {
    class NotAMethod extends MemoryLock {
      constructor(o: ConstructorParameters<typeof MemoryLock>[0]) {
        super(o);
        Object.assign(this, { readMarks: 'yes' });
      }
    }
    await expect(readMarksMatchInspect.run(options(NotAMethod))).rejects.toThrow(
      /readMarks is a method/,
    );
  }, 60_000);
});
