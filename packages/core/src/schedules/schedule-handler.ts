import { InvalidOptionError } from '../errors.js';
import type { JobContext, Middleware } from '../middleware.js';
import { validateMiddleware } from '../scheduler/job/index.js';
import { assertKnownKeys } from '../scheduler/known-keys.js';
import { withFieldPrefix } from './field-prefix.js';
import type { ScheduleOptions, ScheduleRef } from './schedule.js';
import { checkHandlerName, normalizeScheduleDefinition } from './validate-schedule.js';

/** What a run of a stored schedule sees: the job context with `schedule` always set. */
export interface ScheduleContext extends JobContext {
  readonly schedule: ScheduleRef;
}

/** The function a handler runs for each fire of each of its stored schedules. */
export type ScheduleRun = (ctx: ScheduleContext) => unknown;

/** Job options a handler gives every schedule that names it (a stored option overrides). */
export type HandlerDefaults = Pick<
  ScheduleOptions,
  'leaseMs' | 'overlap' | 'catchUp' | 'retry' | 'timeoutMs'
>;

/** A handler registered with a `ScheduleServer`: its function, middleware and defaults. */
export interface ScheduleHandler {
  run: ScheduleRun;
  /** Around every run of the handler, inside `retry` and `timeout` of the schedule. */
  middleware?: Middleware[];
  /** Options of its schedules where they set none. */
  defaults?: HandlerDefaults;
}

/** A handler after checks (internal). */
export interface NormalizedHandler {
  readonly name: string;
  readonly run: ScheduleRun;
  readonly middleware: readonly Middleware[];
  readonly defaults: HandlerDefaults;
}

const HANDLER_KEYS = ['run', 'middleware', 'defaults'];
const DEFAULT_KEYS = ['leaseMs', 'overlap', 'catchUp', 'retry', 'timeoutMs'];

/**
 * Checks the `handlers` option of a `ScheduleServer`: names as stored schedules spell them, each
 * a function or `{ run, middleware?, defaults? }`. @throws InvalidOptionError naming the field
 * (`handlers["reports.daily"].defaults.leaseMs`).
 */
export function normalizeHandlers(handlers: unknown): Map<string, NormalizedHandler> {
  if (typeof handlers !== 'object' || handlers === null) {
    throw new InvalidOptionError(
      'handlers',
      "must be an object of handlers by name: { 'reports.daily': (ctx) => ..., ... }.",
    );
  }
  const out = new Map<string, NormalizedHandler>();
  for (const [name, value] of Object.entries(handlers)) {
    const field = `handlers[${JSON.stringify(name)}]`;
    checkHandlerName(name, field);
    const h: ScheduleHandler =
      typeof value === 'function' ? { run: value as ScheduleRun } : (value as ScheduleHandler);
    if (typeof h !== 'object' || h === null || typeof h.run !== 'function') {
      throw new InvalidOptionError(
        field,
        'must be a function (ctx) => unknown or { run, middleware?, defaults? }.',
      );
    }
    withFieldPrefix(field, () => assertKnownKeys(h, HANDLER_KEYS, 'a handler'));
    const defaults = h.defaults ?? {};
    withFieldPrefix(`${field}.defaults`, () =>
      assertKnownKeys(defaults, DEFAULT_KEYS, 'handler defaults'),
    );
    // the stored options' own checks, fields options.* → handlers["x"].defaults.*
    const checked = withFieldPrefix(`${field}.defaults`, () => {
      try {
        return normalizeScheduleDefinition({
          handler: name,
          trigger: { kind: 'at', at: 0 },
          options: defaults,
        }).options;
      } catch (error) {
        throw stripOptions(error);
      }
    });
    out.set(name, {
      name,
      run: h.run,
      middleware: validateMiddleware(`${field}.middleware`, h.middleware),
      defaults: checked,
    });
  }
  if (out.size === 0) {
    throw new InvalidOptionError('handlers', 'must name at least one handler.');
  }
  return out;
}

/** An `options.x` error as an `x` error (re-prefixed by the caller). */
function stripOptions(error: unknown): unknown {
  const e = error as { field?: string; message?: string; code?: string };
  if (typeof e?.field !== 'string' || !e.field.startsWith('options.')) return error;
  const field = e.field.slice('options.'.length);
  const message = String(e.message).replace(/^options\.[^:]*: /, '');
  return new InvalidOptionError(field, message, {
    cause: error,
    code: e.code as InvalidOptionError['code'],
  });
}
