import { InvalidOptionError } from '../errors.js';
import { triggerFromSpec } from '../fleet/trigger-spec.js';
import { checkJsonData } from '../json-data.js';
import { retry } from '../middleware/retry.js';
import type { CatchUpSpec, TriggerSpec } from '../registry.js';
import { checkJitter } from '../scheduler/job/index.js';
import { assertKnownKeys } from '../scheduler/known-keys.js';
import { assertPositiveInteger, assertPositiveMs } from '../validate.js';
import { withFieldPrefix } from './field-prefix.js';
import {
  type JsonValue,
  MAX_HANDLER_NAME_LENGTH,
  MAX_SCHEDULE_DATA_BYTES,
  MAX_SCHEDULE_ID_LENGTH,
  MAX_SCHEDULE_NOTE_LENGTH,
  type ScheduleDefinition,
  type ScheduleOptions,
} from './schedule.js';

/** What `create` takes: a definition whose `data`, `enabled` and `options` may be left out. */
export interface ScheduleInput {
  handler: string;
  trigger: TriggerSpecInput;
  data?: JsonValue;
  enabled?: boolean;
  options?: ScheduleOptions;
}

/**
 * A trigger spec as given: a cron spec's `tz` defaults to `UTC`, an every spec's `anchor` to 0,
 * and an `at` time may be an ISO string. Stored normalised as a {@link TriggerSpec}.
 */
export type TriggerSpecInput =
  | { kind: 'cron'; expression: string; tz?: string; seed?: string; dialect?: 'unix' | 'quartz' }
  | { kind: 'every'; ms: number; anchor?: number }
  | { kind: 'at'; at: number | string };

const ID = /^[A-Za-z0-9][A-Za-z0-9._:@/-]*$/;
const HANDLER = /^[A-Za-z][A-Za-z0-9._:-]*$/;
const DEFINITION_KEYS = ['handler', 'trigger', 'data', 'enabled', 'options'];
const OPTION_KEYS = Object.keys({
  leaseMs: true,
  overlap: true,
  catchUp: true,
  retry: true,
  timeoutMs: true,
  startAt: true,
  endAt: true,
  note: true,
  overdueAfterMs: true,
  jitterMs: true,
} satisfies Record<keyof ScheduleOptions, true>);
const TRIGGER_KEYS: Record<TriggerSpec['kind'], string[]> = {
  cron: ['kind', 'expression', 'tz', 'seed', 'dialect'],
  every: ['kind', 'ms', 'anchor'],
  at: ['kind', 'at'],
};

/**
 * Checks a schedule id: 1–200 characters, a letter or digit first, then letters, digits and
 * `. _ : @ / -`. @throws InvalidOptionError (field `id`).
 */
export function checkScheduleId(id: unknown): string {
  if (typeof id !== 'string' || id.length === 0 || id.length > MAX_SCHEDULE_ID_LENGTH) {
    throw new InvalidOptionError(
      'id',
      `must be a string of 1 to ${MAX_SCHEDULE_ID_LENGTH} characters, got ${JSON.stringify(id)}.`,
    );
  }
  if (!ID.test(id)) {
    throw new InvalidOptionError(
      'id',
      `must start with a letter or digit and hold only letters, digits and . _ : @ / -, got ${JSON.stringify(id)}.`,
    );
  }
  return id;
}

/**
 * Checks a complete schedule definition and returns it normalised (defaults filled in, trigger
 * spec in its stored form, `data` proven JSON within 64 KiB). Nothing is stored by a caller that
 * gets an error: every store and `FleetClient` run this before writing.
 *
 * @throws InvalidOptionError naming the field (`handler`, `trigger.expression`, `data`,
 *   `options.retry.attempts`, `options.endAt`, an unknown key with the nearest known one), with
 *   the codes `INVALID_CRON`, `UNKNOWN_TIMEZONE`, `AMBIGUOUS_CRON_DIALECT` for those faults.
 */
export function normalizeScheduleDefinition(input: unknown): ScheduleDefinition {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new InvalidOptionError(
      'schedule',
      'must be an object { handler, trigger, data?, enabled?, options? }.',
    );
  }
  assertKnownKeys(input, DEFINITION_KEYS, 'a schedule');
  const d = input as Partial<ScheduleInput>;
  const enabled = d.enabled ?? true;
  if (typeof enabled !== 'boolean') {
    throw new InvalidOptionError(
      'enabled',
      `must be true or false, got ${JSON.stringify(enabled)}.`,
    );
  }
  return {
    handler: checkHandlerName(d.handler),
    trigger: checkTriggerSpec(d.trigger),
    data: checkJsonData(d.data === undefined ? null : d.data, 'data', MAX_SCHEDULE_DATA_BYTES),
    enabled,
    options: checkOptions(d.options ?? {}),
  };
}

/**
 * Checks a handler name: 1–128 characters, a letter first, then letters, digits and `. _ : -`.
 * @throws InvalidOptionError (field `handler`).
 */
export function checkHandlerName(name: unknown, field = 'handler'): string {
  if (typeof name !== 'string' || name.length === 0 || name.length > MAX_HANDLER_NAME_LENGTH) {
    throw new InvalidOptionError(
      field,
      `must be a handler name of 1 to ${MAX_HANDLER_NAME_LENGTH} characters, got ${JSON.stringify(name)}.`,
    );
  }
  if (!HANDLER.test(name)) {
    throw new InvalidOptionError(
      field,
      `must start with a letter and hold only letters, digits and . _ : - (e.g. "reports.daily"), got ${JSON.stringify(name)}.`,
    );
  }
  return name;
}

function checkTriggerSpec(value: unknown): TriggerSpec {
  if (typeof value !== 'object' || value === null) {
    throw new InvalidOptionError(
      'trigger',
      "must be a trigger spec: { kind: 'cron', expression, tz? }, { kind: 'every', ms, anchor? } or { kind: 'at', at }.",
    );
  }
  const kind = (value as { kind?: unknown }).kind;
  if (kind !== 'cron' && kind !== 'every' && kind !== 'at') {
    throw new InvalidOptionError(
      'trigger.kind',
      `must be 'cron', 'every' or 'at', got ${JSON.stringify(kind)}.`,
    );
  }
  withFieldPrefix('trigger', () => assertKnownKeys(value, TRIGGER_KEYS[kind], `a ${kind} trigger`));
  const spec = normalizeSpec(value as TriggerSpecInput);
  withFieldPrefix('trigger', () => triggerFromSpec(spec)); // throws the trigger's own errors
  return spec;
}

function normalizeSpec(spec: TriggerSpecInput): TriggerSpec {
  switch (spec.kind) {
    case 'cron':
      return {
        kind: 'cron',
        expression: spec.expression,
        tz: spec.tz ?? 'UTC',
        ...(spec.seed === undefined ? {} : { seed: spec.seed }),
        ...(spec.dialect === undefined ? {} : { dialect: spec.dialect }),
      };
    case 'every':
      return { kind: 'every', ms: spec.ms, anchor: spec.anchor ?? 0 };
    case 'at': {
      const at = typeof spec.at === 'string' ? Date.parse(spec.at) : spec.at;
      if (typeof at !== 'number' || !Number.isFinite(at)) {
        throw new InvalidOptionError(
          'trigger.at',
          `must be epoch milliseconds or an ISO 8601 time, got ${JSON.stringify(spec.at)}.`,
        );
      }
      return { kind: 'at', at };
    }
  }
}

function checkOptions(value: unknown): ScheduleOptions {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new InvalidOptionError('options', 'must be an object of job options.');
  }
  withFieldPrefix('options', () => assertKnownKeys(value, OPTION_KEYS, 'a schedule'));
  const o = value as ScheduleOptions;
  const out: ScheduleOptions = {};
  withFieldPrefix('options', () => {
    if (o.leaseMs !== undefined) {
      assertPositiveMs('leaseMs', o.leaseMs);
      out.leaseMs = o.leaseMs;
    }
    if (o.overlap !== undefined) {
      if (o.overlap !== 'skip' && o.overlap !== 'allow') {
        throw new InvalidOptionError(
          'overlap',
          `must be 'skip' or 'allow', got ${JSON.stringify(o.overlap)}.`,
        );
      }
      out.overlap = o.overlap;
    }
    if (o.catchUp !== undefined) out.catchUp = checkCatchUpValue(o.catchUp);
    if (o.retry !== undefined) out.retry = checkRetry(o.retry);
    if (o.timeoutMs !== undefined) {
      assertPositiveMs('timeoutMs', o.timeoutMs);
      out.timeoutMs = o.timeoutMs;
    }
    if (o.startAt !== undefined) out.startAt = checkTime('startAt', o.startAt);
    if (o.endAt !== undefined) out.endAt = checkTime('endAt', o.endAt);
    if (out.startAt !== undefined && out.endAt !== undefined && out.endAt < out.startAt) {
      throw new InvalidOptionError(
        'endAt',
        `must not be before startAt (${new Date(out.startAt).toISOString()}), got ${new Date(out.endAt).toISOString()}.`,
      );
    }
    if (o.note !== undefined) {
      if (typeof o.note !== 'string' || o.note.length > MAX_SCHEDULE_NOTE_LENGTH) {
        throw new InvalidOptionError(
          'note',
          `must be a string of at most ${MAX_SCHEDULE_NOTE_LENGTH} characters.`,
        );
      }
      out.note = o.note;
    }
    if (o.overdueAfterMs !== undefined) {
      assertPositiveMs('overdueAfterMs', o.overdueAfterMs);
      out.overdueAfterMs = o.overdueAfterMs;
    }
    if (o.jitterMs !== undefined) out.jitterMs = checkJitter(o.jitterMs);
  });
  return out;
}

/** A time option as stored: epoch ms. */
function checkTime(field: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new InvalidOptionError(
      field,
      `must be epoch milliseconds, got ${JSON.stringify(value)}.`,
    );
  }
  return value;
}

/**
 * The value of `catchUp` (the Scheduler checks it again against the lock's capabilities when
 * the job is added; a lock without a mark refuses anything but `'skip'`, see refusedSchedules).
 */
function checkCatchUpValue(value: unknown): CatchUpSpec {
  if (value === 'skip' || value === 'latest') return value;
  if (typeof value !== 'object' || value === null) {
    throw new InvalidOptionError(
      'catchUp',
      `must be 'skip', 'latest' or { max, within? }, got ${JSON.stringify(value)}.`,
    );
  }
  withFieldPrefix('catchUp', () => assertKnownKeys(value, ['max', 'within'], 'catchUp'));
  const { max, within } = value as { max?: unknown; within?: unknown };
  assertPositiveInteger('catchUp.max', max);
  if (within !== undefined && within !== null) assertPositiveMs('catchUp.within', within);
  return within === undefined || within === null ? { max } : { max, within: within as number };
}

function checkRetry(value: unknown): ScheduleOptions['retry'] {
  if (typeof value !== 'object' || value === null) {
    throw new InvalidOptionError('retry', 'must be { attempts, backoff?, jitter? }.');
  }
  withFieldPrefix('retry', () =>
    assertKnownKeys(value, ['attempts', 'backoff', 'jitter'], 'retry'),
  );
  retry(value as ScheduleOptions['retry'] & object); // the middleware's own checks, fields retry.*
  return JSON.parse(JSON.stringify(value)) as ScheduleOptions['retry'];
}
