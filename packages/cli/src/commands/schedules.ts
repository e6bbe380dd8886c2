import type { SchedulePatch, StoredSchedule, TriggerSpec, TriggerSpecInput } from '@fleetcron/core';
import { integerOption, type ParsedCommand, UsageError } from '../args.js';
import { type Backend, defaultActor } from '../connect.js';
import { EXIT, type ExitCode } from '../exit-codes.js';
import type { CliIo } from '../io.js';
import { table } from '../table.js';

/** The actions of `fleetcron schedules`, and whether each takes an id. */
export const SCHEDULE_ACTIONS: Record<string, { id: boolean }> = {
  list: { id: false },
  get: { id: true },
  create: { id: false },
  update: { id: true },
  enable: { id: true },
  disable: { id: true },
  remove: { id: true },
};

const iso = (at: number): string => new Date(at).toISOString();

/** A trigger spec in one line: `cron 0 3 * * * Europe/Berlin`, `every 60000 ms`, `at <ISO>`. */
function describeSpec(spec: TriggerSpec): string {
  if (spec.kind === 'cron') return `cron ${spec.expression} ${spec.tz}`;
  if (spec.kind === 'every')
    return `every ${spec.ms} ms${spec.anchor ? ` from ${iso(spec.anchor)}` : ''}`;
  return `at ${iso(spec.at)}`;
}

/** Parses a JSON option, naming it in the usage error. */
/** The JSON of option `--name`; `undefined` when not given. @throws UsageError when not JSON. */
export function jsonOption(name: string, value: string | undefined): unknown {
  if (value === undefined) return undefined;
  try {
    return JSON.parse(value);
  } catch (error) {
    throw new UsageError(`--${name} must be JSON: ${(error as Error).message}`);
  }
}

/** `--cron EXPR [--tz Z]`, `--every MS` or `--at ISO`: at most one; `undefined` when none. */
function triggerOption(options: ParsedCommand['options']): TriggerSpecInput | undefined {
  const given = (['cron', 'every', 'at'] as const).filter((k) => options[k] !== undefined);
  if (given.length > 1) throw new UsageError(`give one trigger, got --${given.join(' and --')}`);
  if (options.tz !== undefined && options.cron === undefined) {
    throw new UsageError('--tz applies to --cron only');
  }
  if (options.cron !== undefined) {
    return { kind: 'cron', expression: options.cron, ...(options.tz ? { tz: options.tz } : {}) };
  }
  if (options.every !== undefined) {
    const ms = Number(options.every);
    if (!Number.isFinite(ms))
      throw new UsageError(`--every must be milliseconds, got ${JSON.stringify(options.every)}`);
    return { kind: 'every', ms };
  }
  if (options.at !== undefined) return { kind: 'at', at: options.at };
  return undefined;
}

function enabledOption(value: string | undefined): boolean | undefined {
  if (value === undefined) return undefined;
  if (value !== 'true' && value !== 'false') {
    throw new UsageError(`--enabled must be true or false, got ${JSON.stringify(value)}`);
  }
  return value === 'true';
}

function versionOption(value: string | undefined): number | undefined {
  return value === undefined
    ? undefined
    : integerOption('expected-version', value, 1, Number.MAX_SAFE_INTEGER);
}

function show(schedule: StoredSchedule): string {
  return [
    ['id', schedule.id],
    ['handler', schedule.handler],
    ['trigger', describeSpec(schedule.trigger)],
    ['enabled', String(schedule.enabled)],
    ['version', String(schedule.version)],
    ['data', JSON.stringify(schedule.data)],
    ['options', JSON.stringify(schedule.options)],
    ['created', `${iso(schedule.createdAt)} by ${schedule.createdBy}`],
    ['updated', `${iso(schedule.updatedAt)} by ${schedule.updatedBy}`],
  ]
    .map(([k, v]) => `${(k as string).padEnd(8)} ${v}`)
    .join('\n');
}

/** `fleetcron schedules list|get|create|update|enable|disable|remove`. */
export async function schedulesCommand(
  backend: Backend,
  { action, operand, options }: ParsedCommand,
  io: CliIo,
): Promise<ExitCode> {
  const fleet = backend.fleet;
  const by = options.by ?? defaultActor();
  /** Who asks and, with `--note`, why (kept in the store's audit log). */
  const who = options.note === undefined ? { by } : { by, note: options.note };
  const id = operand as string;
  const out = (schedule: StoredSchedule, said: string) => {
    io.out(options.json ? JSON.stringify(schedule, null, 2) : said);
    return EXIT.ok;
  };
  switch (action) {
    case 'list': {
      const page = await fleet.schedules({
        handler: options.handler ?? null,
        limit: integerOption('limit', options.limit, 100, 1000),
        cursor: options.cursor ?? null,
      });
      if (options.json) io.out(JSON.stringify(page, null, 2));
      else if (page.schedules.length === 0) io.out('no schedules');
      else
        io.out(
          table(
            ['ID', 'HANDLER', 'TRIGGER', 'ENABLED', 'VERSION', 'SERVED', 'UPDATED'],
            page.schedules.map((s) => [
              s.id,
              s.handler,
              describeSpec(s.trigger),
              s.enabled ? 'yes' : 'no',
              String(s.version),
              s.unserved ? 'UNSERVED' : String(s.servedBy.length),
              `${iso(s.updatedAt)} by ${s.updatedBy}`,
            ]),
          ),
        );
      const unserved = page.schedules.filter((s) => s.unserved).map((s) => s.id);
      if (unserved.length > 0 && !options.json) {
        io.err(
          `warning: no live instance serves ${unserved.join(', ')} (handler not registered, or refused)`,
        );
      }
      if (page.nextCursor) io.err(`more: --cursor ${page.nextCursor}`);
      return EXIT.ok;
    }
    case 'get': {
      const schedule = await fleet.getSchedule(id);
      if (!schedule) {
        io.err(
          `fleetcron: no schedule ${JSON.stringify(id)} is stored; see "fleetcron schedules list"`,
        );
        return EXIT.unknownJob;
      }
      return out(schedule, show(schedule));
    }
    case 'create': {
      const trigger = triggerOption(options);
      if (options.handler === undefined || trigger === undefined) {
        throw new UsageError('"schedules create" needs --handler and one of --cron, --every, --at');
      }
      const created = await fleet.createSchedule(
        {
          ...(options.id === undefined ? {} : { id: options.id }),
          handler: options.handler,
          trigger,
          ...(options.data === undefined
            ? {}
            : { data: jsonOption('data', options.data) as never }),
          ...(options.enabled === undefined
            ? {}
            : { enabled: enabledOption(options.enabled) as boolean }),
          ...(options.options === undefined
            ? {}
            : { options: jsonOption('options', options.options) as never }),
        },
        who,
      );
      return out(created, `created ${created.id} (version 1, by ${by})`);
    }
    case 'update': {
      const expectedVersion = versionOption(options['expected-version']);
      if (expectedVersion === undefined) {
        throw new UsageError(
          '"schedules update" needs --expected-version N (the version you read)',
        );
      }
      const trigger = triggerOption(options);
      const enabled = enabledOption(options.enabled);
      const patch: SchedulePatch = {
        ...(options.handler === undefined ? {} : { handler: options.handler }),
        ...(trigger === undefined ? {} : { trigger }),
        ...(options.data === undefined ? {} : { data: jsonOption('data', options.data) as never }),
        ...(enabled === undefined ? {} : { enabled }),
        ...(options.options === undefined
          ? {}
          : { options: jsonOption('options', options.options) as never }),
      };
      if (Object.keys(patch).length === 0) {
        throw new UsageError(
          '"schedules update" changes nothing: give --handler, a trigger, --data, --enabled or --options',
        );
      }
      const updated = await fleet.updateSchedule(id, patch, { ...who, expectedVersion });
      return out(updated, `updated ${id} to version ${updated.version} (by ${by})`);
    }
    case 'enable':
    case 'disable': {
      const expectedVersion = versionOption(options['expected-version']);
      const actor = expectedVersion === undefined ? who : { ...who, expectedVersion };
      const changed =
        action === 'enable'
          ? await fleet.enableSchedule(id, actor)
          : await fleet.disableSchedule(id, actor);
      return out(changed, `${id} ${action}d (version ${changed.version}, by ${by})`);
    }
    default: {
      const expectedVersion = versionOption(options['expected-version']);
      const actor = expectedVersion === undefined ? who : { ...who, expectedVersion };
      const removed = await fleet.removeSchedule(id, actor);
      return out(removed, `removed ${id} (it was at version ${removed.version}; by ${by})`);
    }
  }
}
