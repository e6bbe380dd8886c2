import { InvalidOptionError } from './errors.js';

/** Throws {@link InvalidOptionError} unless `value` is a finite number greater than zero. */
export function assertPositiveMs(field: string, value: unknown): asserts value is number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new InvalidOptionError(
      field,
      `must be a positive number of milliseconds, got ${String(value)}.`,
    );
  }
}

/** Throws {@link InvalidOptionError} unless `value` is a finite number >= 0. */
export function assertNonNegativeMs(field: string, value: unknown): asserts value is number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new InvalidOptionError(
      field,
      `must be zero or a positive number of milliseconds, got ${String(value)}.`,
    );
  }
}

/** Throws {@link InvalidOptionError} unless `value` is a non-empty string. */
export function assertNonEmptyString(field: string, value: unknown): asserts value is string {
  if (typeof value !== 'string' || value.length === 0) {
    throw new InvalidOptionError(
      field,
      `must be a non-empty string, got ${JSON.stringify(value)}.`,
    );
  }
}

/** Throws {@link InvalidOptionError} unless `value` is a positive integer. */
export function assertPositiveInteger(field: string, value: unknown): asserts value is number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value <= 0) {
    throw new InvalidOptionError(field, `must be a positive integer, got ${String(value)}.`);
  }
}
