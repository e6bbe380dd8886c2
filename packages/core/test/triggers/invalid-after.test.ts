import { describe, expect, it } from 'vitest';
import { InvalidOptionError, isFleetcronError } from '../../src/errors.js';
import type { Trigger } from '../../src/trigger.js';
import { at } from '../../src/triggers/at.js';
import { cron } from '../../src/triggers/cron.js';
import { every } from '../../src/triggers/every.js';
import { thrown } from './helpers.js';

const triggers: [string, () => Trigger][] = [
  ['cron (UTC)', () => cron('*/5 * * * *')],
  ['cron (Europe/Berlin)', () => cron('0 9 * * *', { tz: 'Europe/Berlin' })],
  ['every', () => every(1000)],
  ['at', () => at('2030-01-01T00:00:00Z')],
];

describe('trigger.next(after) with a time that is not a valid Date', () => {
  describe.each(triggers)('%s', (_name, make) => {
    it('throws InvalidOptionError(after) for new Date("invalid") instead of returning null', () => {
      const trigger = make();
      const error = thrown(() => trigger.next(new Date('invalid')));
      expect(error).toBeInstanceOf(InvalidOptionError);
      expect(isFleetcronError(error, 'INVALID_OPTION')).toBe(true);
      expect((error as InvalidOptionError).field).toBe('after');
      expect((error as Error).message).toContain(`${trigger.describe()}.next(after)`);
      expect((error as Error).message).toContain('an Invalid Date');
    });

    it.each([
      [Number.NaN, 'number NaN'],
      [Date.parse('2026-01-01T00:00:00Z'), 'number 1767225600000'],
      ['2026-01-01', 'the string "2026-01-01"'],
      [null, 'null'],
      [undefined, 'undefined undefined'],
    ])('throws InvalidOptionError(after) for the non-Date %j', (value, described) => {
      const error = thrown(() => make().next(value as unknown as Date));
      expect(isFleetcronError(error, 'INVALID_OPTION')).toBe(true);
      expect((error as InvalidOptionError).field).toBe('after');
      expect((error as Error).message).toContain(`got ${described}`);
    });

    it('still answers for a valid Date', () => {
      expect(make().next(new Date('2026-01-01T00:00:00Z'))).toBeInstanceOf(Date);
    });
  });
});
