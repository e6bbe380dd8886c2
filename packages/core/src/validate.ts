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

/**
 * Bidirectional-text controls: embeddings and overrides (U+202A–U+202E), isolates
 * (U+2066–U+2069) and the directional marks (U+200E, U+200F, U+061C). In a name they make the
 * shown text differ from the stored one: `invoice-\u202Eexe.fdp` shows as "invoice-pdf.exe".
 */
export const BIDI_CONTROL = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/;

/**
 * Throws {@link InvalidOptionError} naming `field` when `value` holds a bidi control
 * ({@link BIDI_CONTROL}), with its code point and index.
 */
export function assertNoBidiControl(field: string, value: string): void {
  const found = BIDI_CONTROL.exec(value);
  if (found) {
    const code = (found[0].codePointAt(0) as number).toString(16).toUpperCase().padStart(4, '0');
    throw new InvalidOptionError(
      field,
      `must not contain bidirectional-text controls (they make the shown name differ from the real one), got U+${code} at index ${found.index}; remove it.`,
    );
  }
}
