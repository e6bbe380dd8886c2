import { InvalidOptionError, isFleetcronError } from '../errors.js';

/**
 * Runs `check` and re-throws an input error it throws with its field under `prefix`
 * (`expression` → `trigger.expression`), keeping the code (`INVALID_CRON`, `UNKNOWN_TIMEZONE`,
 * ...) and the original error as `cause`: a stored schedule's errors name the field as the
 * schedule spells it.
 */
export function withFieldPrefix<T>(prefix: string, check: () => T): T {
  try {
    return check();
  } catch (error) {
    if (!isFleetcronError(error) || error.field === undefined) throw error;
    const field = error.field.startsWith(`${prefix}.`) ? error.field : `${prefix}.${error.field}`;
    const own = `${error.field}: `;
    const message = error.message.startsWith(own) ? error.message.slice(own.length) : error.message;
    throw new InvalidOptionError(field, message, { cause: error, code: error.code });
  }
}
