import { InvalidOptionError } from '@fleetcron/core';

/** PostgreSQL truncates identifiers beyond this many bytes. */
export const MAX_IDENTIFIER_BYTES = 63;

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Throws {@link InvalidOptionError} unless `value` is a plain SQL identifier (letters, digits,
 * `_`, not starting with a digit) that stays within 63 bytes with `reserve` more characters.
 * Returns `value`, safe to put between double quotes in a statement.
 */
export function assertIdentifier(field: string, value: unknown, reserve = 0): string {
  if (typeof value !== 'string' || !IDENTIFIER.test(value)) {
    throw new InvalidOptionError(
      field,
      `must be a plain SQL identifier (letters, digits and _, not starting with a digit), got ${JSON.stringify(value)}.`,
    );
  }
  if (value.length + reserve > MAX_IDENTIFIER_BYTES) {
    throw new InvalidOptionError(
      field,
      `is too long: PostgreSQL identifiers hold ${MAX_IDENTIFIER_BYTES} bytes${reserve ? `, including the ${reserve}-character suffix the adapter appends` : ''}.`,
    );
  }
  return value;
}
