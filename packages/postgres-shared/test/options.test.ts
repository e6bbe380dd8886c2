import { isFleetcronError, silentLogger } from '@fleetcron/core';
import { describe, expect, it } from 'vitest';
import {
  assertIdentifier,
  MAX_IDENTIFIER_BYTES,
  resolveStatementOptions,
  resolveTableOptions,
} from '../src/index.js';

/** The field named by the `InvalidOptionError` that `fn` throws. */
function invalidField(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    expect(isFleetcronError(error, 'INVALID_OPTION')).toBe(true);
    return (error as { field?: string }).field;
  }
  return undefined;
}

describe('assertIdentifier', () => {
  it.each(['public', '_x', 'Fleet_Cron_2'])('accepts %j', (value) => {
    expect(assertIdentifier('schema', value)).toBe(value);
  });

  it.each(['', '1abc', 'bad-name', 'x"; DROP TABLE y; --', 'ümlaut', 42, null])(
    'rejects %j',
    (value) => {
      expect(invalidField(() => assertIdentifier('schema', value))).toBe('schema');
    },
  );

  it('counts the reserved suffix against the 63-byte limit', () => {
    const longest = 'a'.repeat(MAX_IDENTIFIER_BYTES - 7);
    expect(assertIdentifier('table', longest, 7)).toBe(longest);
    expect(invalidField(() => assertIdentifier('table', `${longest}a`, 7))).toBe('table');
  });
});

describe('resolveTableOptions', () => {
  it('applies the defaults', () => {
    expect(resolveTableOptions({}, 7)).toEqual({ schema: 'public', table: 'fleetcron' });
  });

  it('checks schema before table', () => {
    expect(invalidField(() => resolveTableOptions({ schema: '1', table: '2' }, 0))).toBe('schema');
    expect(invalidField(() => resolveTableOptions({ table: 'a'.repeat(60) }, 7))).toBe('table');
  });
});

describe('resolveStatementOptions', () => {
  it('applies the defaults', () => {
    expect(resolveStatementOptions({})).toEqual({
      statementTimeoutMs: 5000,
      preparedStatements: false,
      logger: silentLogger,
    });
  });

  it.each([
    ['statementTimeoutMs', { statementTimeoutMs: 0 }],
    ['statementTimeoutMs', { statementTimeoutMs: -1 }],
    ['preparedStatements', { preparedStatements: 'yes' as unknown as boolean }],
  ])('rejects a bad %s', (field, options) => {
    expect(invalidField(() => resolveStatementOptions(options))).toBe(field);
  });
});
