import { DeadlineError, GivenUpError } from './deadline-error.js';

const SQLSTATE = /^[0-9A-Z]{5}$/;

/**
 * True for errors of the connection rather than of the statement (socket errors, SQLSTATE
 * classes 08 and 40, `57P01`-`57P03`): worth one more try on a fresh connection. A passed
 * deadline or pg's `Query read timeout` is not.
 */
export function isConnectionError(error: unknown): boolean {
  if (error instanceof DeadlineError || error instanceof GivenUpError) return false;
  if (error instanceof Error && error.message === 'Query read timeout') return false;
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string' || !SQLSTATE.test(code)) return true; // socket errors, terminated
  return code.startsWith('08') || code.startsWith('40') || /^57P0[123]$/.test(code);
}
