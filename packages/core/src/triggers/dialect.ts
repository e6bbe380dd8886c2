/**
 * Cron dialects. The engine (cron-parser, `cron-matcher.ts`) reads Unix weekday numbers
 * (`0`–`7`, `0` and `7` = Sunday). Quartz numbers weekdays `1`–`7` = Sunday–Saturday and adds
 * an optional seventh field, the year. This file turns a Quartz weekday field into the Unix one
 * that means the same days, and tells when an expression given without a dialect reads
 * differently in the two (`?` and numeric weekdays), so `cron()` can refuse to guess.
 */

/** How numeric weekdays (and a seventh field) are read: see `CronOptions.dialect`. */
export type CronDialect = 'unix' | 'quartz';

/** The dialects, for validation and messages. */
export const CRON_DIALECTS: readonly CronDialect[] = ['unix', 'quartz'];

const DAY_NAMES = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'] as const;

/** One part of a weekday field (between commas) in the forms both dialects share. */
const PART = /^(\*|[A-Z]{3}|\d+)(?:-([A-Z]{3}|\d+))?(?:\/(\d+))?$/i;
/** `nL` (last weekday n of the month) and `n#k` (k-th weekday n of the month). */
const SUFFIXED = /^([A-Z]{3}|\d+)(L|#\d+)$/i;

/** A weekday written as a name or a Quartz number, as a Unix number 0–6; throws for a bad one. */
function quartzDay(token: string, field: string): number {
  const name = DAY_NAMES.indexOf(token.toUpperCase() as (typeof DAY_NAMES)[number]);
  if (name >= 0) return name;
  const n = Number(token);
  if (!/^\d+$/.test(token) || n < 1 || n > 7) {
    throw new Error(
      `${field} in day-of-week: the quartz dialect numbers weekdays 1 (SUN) to 7 (SAT), got ${token}; write 1-7 or SUN-SAT`,
    );
  }
  return n - 1;
}

/** One comma-separated part of a Quartz weekday field, in Unix numbering. */
function quartzPart(part: string, field: string): string {
  if (part === '?' || part === '*') return part;
  if (part.toUpperCase() === 'L') return '6'; // Quartz: L alone is the last day of the week, SAT
  const suffixed = SUFFIXED.exec(part);
  if (suffixed) return `${quartzDay(suffixed[1] as string, field)}${suffixed[2]?.toUpperCase()}`;
  const plain = PART.exec(part);
  if (!plain) {
    throw new Error(
      `${part} in day-of-week: the quartz dialect reads weekdays as n, a-b, a/s, a-b/s, nL, n#k, L, names (MON-FRI), * and ?`,
    );
  }
  const [, from = '*', to, step] = plain;
  const start = from === '*' ? 0 : quartzDay(from, field);
  // Quartz `a/s` runs to the end of the week (SAT); Unix `a/s` would run to 7, a second Sunday.
  const end = to !== undefined ? quartzDay(to, field) : from === '*' || step ? 6 : start;
  if (from === '*' && step === undefined) return '*';
  if (end < start) {
    // Quartz wraps a range such as FRI-MON (6-2) around the week's end.
    if (step !== undefined) {
      throw new Error(
        `${part} in day-of-week: a range that wraps around the end of the week cannot take a step; write the days as a list`,
      );
    }
    return `${start}-6,0-${end}`;
  }
  const range = start === end ? `${start}` : `${start}-${end}`;
  return step === undefined ? range : `${range}/${step}`;
}

/**
 * A Quartz day-of-week field (`1`–`7` = SUN–SAT, names, `L`, `nL`, `n#k`, ranges, steps, `?`)
 * written in the Unix numbering the engine reads. Throws an Error saying what is wrong.
 */
export function quartzWeekdaysToUnix(field: string): string {
  return field
    .split(',')
    .map((part) => quartzPart(part, field))
    .join(',');
}

/** Whether a weekday field uses a weekday number (a digit outside `#k` or a step). */
function hasNumericWeekday(field: string): boolean {
  return field.split(',').some((part) => /\d/.test(part.replace(/#\d+$|\/\d+$/g, '')));
}

/**
 * Whether an expression given without a dialect reads differently in Unix and Quartz: 6 or 7
 * fields, `?` in a day field and a weekday written as a number. 5 fields are Unix only; names
 * and `*` mean the same in both; without `?` it is no Quartz expression (Quartz requires `?` in
 * one day field).
 */
export function isDialectAmbiguous(fields: readonly string[]): boolean {
  if (fields.length < 6 || fields.length > 7) return false;
  const dom = fields[3] ?? '*';
  const dow = fields[5] ?? '*';
  return (dom.includes('?') || dow.includes('?')) && hasNumericWeekday(dow);
}

/** A weekday field spelled with names in a dialect, e.g. `6L` → `last FRI` (Quartz). */
export function readWeekdays(field: string, dialect: CronDialect): string {
  const name = (token: string): string => {
    if (!/^\d+$/.test(token)) return token.toUpperCase();
    const n = Number(token);
    const valid = dialect === 'quartz' ? n >= 1 && n <= 7 : n <= 7;
    const day = valid ? DAY_NAMES[dialect === 'quartz' ? n - 1 : n % 7] : undefined;
    return day ?? `${token} (no such weekday)`;
  };
  return field
    .split(',')
    .map((part) => {
      const suffixed = SUFFIXED.exec(part);
      if (suffixed) {
        const day = name(suffixed[1] as string);
        const suffix = suffixed[2] as string;
        return suffix.toUpperCase() === 'L' ? `last ${day}` : `${day}${suffix}`;
      }
      return part.replace(/[A-Z]{3}|\d+(?=-|\/|$)/gi, (token, offset: number) =>
        offset > 0 && part[offset - 1] === '/' ? token : name(token),
      );
    })
    .join(',');
}
