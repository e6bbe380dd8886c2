import { describe, expect, it } from 'vitest';
import { type ElectionLedgerEntry, electionViolations } from '../../src/index.js';

const line = (
  mono: number,
  instance: string,
  kind: ElectionLedgerEntry['kind'],
  term?: number,
): ElectionLedgerEntry => ({
  mono,
  instance,
  kind,
  pid: 1,
  ...(term === undefined ? {} : { term }),
});
const strict = { abortBeforeNext: true, oneLeader: true };

describe('electionViolations', () => {
  it('accepts a clean handover', () => {
    const entries = [
      line(0, 'a', 'elected', 1),
      line(10, 'a', 'act', 1),
      line(20, 'a', 'abort', 1),
      line(30, 'b', 'elected', 2),
      line(40, 'b', 'act', 2),
    ];
    expect(electionViolations(entries, strict)).toEqual([]);
  });

  it('reports an old leader acting after a newer term was elected, and a late or missing abort', () => {
    const entries = [
      line(0, 'a', 'elected', 1),
      line(30, 'b', 'elected', 2),
      line(35, 'a', 'act', 1),
      line(40, 'a', 'abort', 1),
      line(50, 'c', 'elected', 3),
    ];
    const violations = electionViolations(entries, strict);
    expect(violations.join('\n')).toMatch(
      /a acted under term 1 5 ms after b was elected with term 2/,
    );
    expect(violations.join('\n')).toMatch(/a's signal of term 1 aborted 10 ms after term 2/);
    expect(violations.join('\n')).toMatch(/b's signal of term 2 was never aborted/);
  });

  it('reports terms that do not increase; excuses the abort of a killed or frozen holder', () => {
    const entries = [
      line(0, 'a', 'elected', 5),
      line(5, 'a', 'freeze'),
      line(10, 'b', 'elected', 5),
      line(20, 'a', 'thaw'),
      line(21, 'a', 'abort', 5),
      line(30, 'b', 'killed'),
      line(40, 'c', 'elected', 7),
    ];
    const violations = electionViolations(entries, strict);
    expect(violations).toEqual([
      'term 5 (b) was elected after term 5 (a): terms must strictly increase',
    ]);
  });
});
