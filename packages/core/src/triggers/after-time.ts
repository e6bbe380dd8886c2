import { InvalidOptionError } from '../errors.js';

/**
 * The epoch-ms time of the `after` argument of `Trigger.next()`. A trigger cannot answer "the
 * next fire after an unknown time", so an Invalid Date (or a non-Date) throws instead of
 * returning `null`, which would read as "this trigger is done".
 *
 * @param trigger The trigger's description, e.g. `cron(* * * * * UTC)`, for the message.
 * @throws InvalidOptionError (field `after`) unless `after` is a Date holding a valid time.
 */
export function afterTime(after: unknown, trigger: string): number {
  const time = after instanceof Date ? after.getTime() : Number.NaN;
  if (Number.isNaN(time)) {
    const got = after instanceof Date ? 'an Invalid Date' : describeValue(after);
    throw new InvalidOptionError(
      'after',
      `${trigger}.next(after) needs a Date holding a valid time, got ${got}. Pass e.g. new Date() or new Date(epochMs) with a finite epochMs.`,
    );
  }
  return time;
}

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'string') return `the string ${JSON.stringify(value)}`;
  return `${typeof value} ${String(value)}`;
}
