import { describe, expect, it } from 'vitest';
import { isFleetcronError } from '../../src/errors.js';
import { at } from '../../src/triggers/at.js';
import { thrown } from './helpers.js';

const WHEN = '2026-06-01T12:00:00.000Z';

describe('at(date)', () => {
  it('fires once: the date while it is later than `after`, then null', () => {
    const t = at(new Date(WHEN));
    expect(t.next(new Date('2026-01-01T00:00:00Z'))?.toISOString()).toBe(WHEN);
    expect(t.next(new Date('2026-06-01T11:59:59.999Z'))?.toISOString()).toBe(WHEN);
    expect(t.next(new Date(WHEN))).toBeNull();
    expect(t.next(new Date('2027-01-01T00:00:00Z'))).toBeNull();
  });

  it('accepts a Date, epoch ms or an ISO string, and copies the Date', () => {
    const date = new Date(WHEN);
    const t = at(date);
    date.setUTCFullYear(2030);
    expect(t.next(new Date(0))?.toISOString()).toBe(WHEN);
    expect(at(Date.parse(WHEN)).next(new Date(0))?.toISOString()).toBe(WHEN);
    expect(at('2026-06-01T14:00:00+02:00').next(new Date(0))?.toISOString()).toBe(WHEN);
  });

  it('returns a fresh Date each time', () => {
    const t = at(WHEN);
    const first = t.next(new Date(0));
    first?.setUTCFullYear(1999);
    expect(t.next(new Date(0))?.toISOString()).toBe(WHEN);
  });

  it.each([
    new Date(Number.NaN),
    Number.NaN,
    Number.POSITIVE_INFINITY,
    'not a date',
    null,
    undefined,
  ])('rejects %s with InvalidOptionError(at)', (value) => {
    const error = thrown(() => at(value as unknown as string));
    expect(isFleetcronError(error, 'INVALID_OPTION')).toBe(true);
    expect((error as { field: string }).field).toBe('at');
  });

  it('describes itself', () => {
    expect(at(WHEN).describe()).toBe(`at(${WHEN})`);
  });
});
