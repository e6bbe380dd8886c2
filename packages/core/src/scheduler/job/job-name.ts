import { InvalidOptionError } from '../../errors.js';
import { assertNoBidiControl } from '../../validate.js';

/** Longest job name (the lock key limit of every backend). */
export const MAX_JOB_NAME_LENGTH = 512;

/**
 * A job name: a non-empty string of at most {@link MAX_JOB_NAME_LENGTH} characters, well-formed
 * Unicode (no lone surrogate, which some backends cannot encode), without control characters
 * (which break keys, logs and history views; the lock keys of sharded fires use one as their
 * separator, so they never equal a job name) and without bidirectional controls (which make a
 * name read as another wherever it is shown).
 */
export function checkName(name: unknown): string {
  if (typeof name !== 'string' || name.length === 0) {
    throw new InvalidOptionError(
      'name',
      `must be a non-empty string, got ${JSON.stringify(name)}.`,
    );
  }
  if (name.length > MAX_JOB_NAME_LENGTH) {
    throw new InvalidOptionError(
      'name',
      `must be at most ${MAX_JOB_NAME_LENGTH} characters, got ${name.length}.`,
    );
  }
  const lone = /\p{Cs}/u.exec(name); // in a `u` regex only LONE surrogates match
  if (lone) {
    throw new InvalidOptionError(
      'name',
      `must be well-formed Unicode, got a lone surrogate (half of a UTF-16 pair) at index ${lone.index} in ${JSON.stringify(name)}; use the whole character.`,
    );
  }
  const control = /\p{Cc}/u.exec(name);
  if (control) {
    const code = control[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0');
    throw new InvalidOptionError(
      'name',
      `must not contain control characters, got U+${code} at index ${control.index} in ${JSON.stringify(name)}.`,
    );
  }
  // a name shown reordered ("invoice-\u202Eexe.fdp" reads as "invoice-pdf.exe") misleads operators
  assertNoBidiControl('name', name);
  return name;
}
