import { dialectOption, integerOption, type ParsedCommand, UsageError } from '../args.js';
import { upcomingFires } from '../dst-notes.js';
import { EXIT, type ExitCode } from '../exit-codes.js';
import type { CliIo } from '../io.js';
import { table } from '../table.js';

/** Most fires `-n` may ask for. */
export const MAX_COUNT = 1000;

/** `--after` as a Date (default now); a usage error naming it when it is not a time. */
export function afterOf(value: string | undefined): Date {
  if (value === undefined) return new Date();
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) {
    throw new UsageError(
      `--after must be an ISO 8601 time such as 2026-03-28T00:00:00Z, got ${JSON.stringify(value)}`,
    );
  }
  return date;
}

/** `fleetcron next "<expr>" [--tz ZONE] [--dialect quartz|unix] [-n COUNT] [--after ISO] [--json]`. */
export function nextCommand({ operand, options }: ParsedCommand, io: CliIo): ExitCode {
  const expression = operand as string;
  const tz = options.tz ?? 'UTC';
  const dialect = dialectOption(options.dialect);
  const count = integerOption('count', options.count, 10, MAX_COUNT);
  const fires = upcomingFires(expression, tz, afterOf(options.after), count, dialect);
  if (options.json) {
    const body =
      dialect === undefined ? { expression, tz, fires } : { expression, tz, dialect, fires };
    io.out(JSON.stringify(body, null, 2));
    return EXIT.ok;
  }
  const rows = fires.map((fire, i) => [
    String(i + 1),
    fire.utc,
    fire.local,
    fire.notes.map((n) => n.text).join('; '),
  ]);
  io.out(table(['#', 'UTC', tz, 'DST'], rows));
  return EXIT.ok;
}
