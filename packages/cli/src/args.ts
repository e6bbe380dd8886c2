import { parseArgs } from 'node:util';
import type { CronDialect } from '@fleetcron/core';

/** Bad command-line arguments: the CLI prints the message and the usage, exit 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** Parsed options of any command (each command accepts a subset, see `COMMAND_OPTIONS`). */
export interface CliOptions {
  tz?: string;
  dialect?: string;
  count?: string;
  after?: string;
  job?: string;
  json?: boolean;
  help?: boolean;
  version?: boolean;
  postgres?: string;
  redis?: string;
  etcd?: string;
  sqlite?: string;
  schema?: string;
  prefix?: string;
  by?: string;
  status?: string;
  limit?: string;
  cursor?: string;
  port?: string;
  host?: string;
  token?: string;
  'read-token'?: string;
  'base-path'?: string;
  'tokens-file'?: string;
  'allowed-hosts'?: string;
  'public-origin'?: string;
  grace?: string;
  handler?: string;
  cron?: string;
  every?: string;
  at?: string;
  id?: string;
  data?: string;
  options?: string;
  enabled?: string;
  'expected-version'?: string;
  wait?: boolean;
  timeout?: string;
  action?: string;
  note?: string;
}

const OPTIONS = {
  tz: { type: 'string' },
  dialect: { type: 'string' },
  count: { type: 'string', short: 'n' },
  after: { type: 'string' },
  job: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'V' },
  postgres: { type: 'string' },
  redis: { type: 'string' },
  etcd: { type: 'string' },
  sqlite: { type: 'string' },
  schema: { type: 'string' },
  prefix: { type: 'string' },
  by: { type: 'string' },
  status: { type: 'string' },
  limit: { type: 'string' },
  cursor: { type: 'string' },
  port: { type: 'string' },
  host: { type: 'string' },
  token: { type: 'string' },
  'read-token': { type: 'string' },
  'base-path': { type: 'string' },
  'tokens-file': { type: 'string' },
  'allowed-hosts': { type: 'string' },
  'public-origin': { type: 'string' },
  grace: { type: 'string' },
  handler: { type: 'string' },
  cron: { type: 'string' },
  every: { type: 'string' },
  at: { type: 'string' },
  id: { type: 'string' },
  data: { type: 'string' },
  options: { type: 'string' },
  enabled: { type: 'string' },
  'expected-version': { type: 'string' },
  wait: { type: 'boolean' },
  timeout: { type: 'string' },
  action: { type: 'string' },
  note: { type: 'string' },
} as const;

const BACKEND = ['postgres', 'redis', 'etcd', 'sqlite', 'schema', 'prefix'] as const;

/** Which options each command accepts, and how many positional arguments it takes. */
export const COMMAND_OPTIONS: Record<
  string,
  { options: readonly string[]; positionals: number; operand?: string }
> = {
  next: {
    // `next --job NAME` (a fleet job, no expression) takes the backend options too
    options: ['tz', 'dialect', 'count', 'after', 'json', 'job', ...BACKEND],
    positionals: 1,
    operand: 'expression',
  },
  validate: { options: ['tz', 'dialect', 'json'], positionals: 1, operand: 'expression' },
  instances: { options: [...BACKEND, 'json'], positionals: 0 },
  jobs: { options: [...BACKEND, 'json'], positionals: 0 },
  history: {
    options: [...BACKEND, 'json', 'status', 'limit', 'cursor'],
    positionals: 1,
    operand: 'job',
  },
  pause: { options: [...BACKEND, 'json', 'by', 'note'], positionals: 1, operand: 'job' },
  resume: { options: [...BACKEND, 'json', 'by', 'note'], positionals: 1, operand: 'job' },
  run: {
    options: [...BACKEND, 'json', 'by', 'note', 'data', 'wait', 'timeout'],
    positionals: 1,
    operand: 'job',
  },
  request: { options: [...BACKEND, 'json'], positionals: 1, operand: 'run request id' },
  audit: { options: [...BACKEND, 'json', 'job', 'action', 'limit', 'cursor'], positionals: 0 },
  serve: {
    options: [
      ...BACKEND,
      'port',
      'host',
      'token',
      'read-token',
      'tokens-file',
      'base-path',
      'allowed-hosts',
      'public-origin',
      'grace',
    ],
    positionals: 0,
  },
};

/** The options of each `schedules` action (see `fleetcron schedules`). */
const SCHEDULE_OPTIONS: Record<string, readonly string[]> = {
  list: [...BACKEND, 'json', 'handler', 'limit', 'cursor'],
  get: [...BACKEND, 'json'],
  create: [
    ...BACKEND,
    'json',
    'by',
    'note',
    'id',
    'handler',
    'cron',
    'tz',
    'every',
    'at',
    'data',
    'enabled',
    'options',
  ],
  update: [
    ...[...BACKEND, 'json', 'by', 'note', 'expected-version', 'handler', 'cron', 'tz', 'every'],
    'at',
    ...['data', 'enabled', 'options'],
  ],
  enable: [...BACKEND, 'json', 'by', 'note', 'expected-version'],
  disable: [...BACKEND, 'json', 'by', 'note', 'expected-version'],
  remove: [...BACKEND, 'json', 'by', 'note', 'expected-version'],
};

/** A parsed command line. */
export interface ParsedCommand {
  command: string | null;
  /** The action of a command with actions (`schedules list`), else absent. */
  action?: string;
  operand: string | null;
  options: CliOptions;
}

/** `schedules <action> [id]`: the action, its id, and the options it accepts. */
function parseSchedules(rest: readonly string[], values: CliOptions): ParsedCommand {
  const [action, ...ids] = rest;
  const accepted = action === undefined ? undefined : SCHEDULE_OPTIONS[action];
  if (action === undefined || accepted === undefined) {
    throw new UsageError(
      `"schedules" takes an action: ${Object.keys(SCHEDULE_OPTIONS).join(', ')}; got ${JSON.stringify(action ?? null)}`,
    );
  }
  for (const key of Object.keys(values)) {
    if (!accepted.includes(key))
      throw new UsageError(`option --${key} does not apply to "schedules ${action}"`);
  }
  const takesId = !['list', 'create'].includes(action);
  if (ids.length !== (takesId ? 1 : 0)) {
    throw new UsageError(
      `"schedules ${action}" takes ${takesId ? 'one schedule id' : 'no argument'}, got ${ids.length === 0 ? 'none' : ids.map((r) => JSON.stringify(r)).join(' ')}`,
    );
  }
  return { command: 'schedules', action, operand: ids[0] ?? null, options: values };
}

/** Parses argv (without `node` and the script) with `node:util` parseArgs; throws {@link UsageError}. */
export function parseCommandLine(argv: readonly string[]): ParsedCommand {
  let parsed: { values: CliOptions; positionals: string[] };
  try {
    parsed = parseArgs({
      args: [...argv],
      options: OPTIONS,
      allowPositionals: true,
      strict: true,
    }) as {
      values: CliOptions;
      positionals: string[];
    };
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const [command = null, ...rest] = parsed.positionals;
  if (parsed.values.version && !parsed.values.help) {
    return { command: 'version', operand: null, options: parsed.values };
  }
  if (parsed.values.help || command === null || command === 'help') {
    return { command: null, operand: null, options: parsed.values };
  }
  if (command === 'schedules') return parseSchedules(rest, parsed.values);
  const spec = COMMAND_OPTIONS[command];
  if (!spec) throw new UsageError(`unknown command ${JSON.stringify(command)}`);
  for (const key of Object.keys(parsed.values)) {
    if (!spec.options.includes(key))
      throw new UsageError(`option --${key} does not apply to "${command}"`);
  }
  const byJob = command === 'next' && parsed.values.job !== undefined;
  if (byJob) {
    for (const key of ['tz', 'dialect'] as const) {
      if (parsed.values[key] !== undefined)
        throw new UsageError(
          `option --${key} does not apply to "next --job" (the job's own zone and trigger are used)`,
        );
    }
    if (rest.length !== 0)
      throw new UsageError(
        `"next --job" takes no expression, got ${rest.map((r) => JSON.stringify(r)).join(' ')}`,
      );
    return { command, operand: null, options: parsed.values };
  }
  if (command === 'next') {
    for (const key of BACKEND) {
      if (parsed.values[key] !== undefined)
        throw new UsageError(`option --${key} applies to "next" only with --job NAME`);
    }
  }
  if (rest.length !== spec.positionals) {
    const what = spec.operand ? `one ${spec.operand}` : 'no argument';
    throw new UsageError(
      `"${command}" takes ${what}, got ${rest.length === 0 ? 'none' : rest.map((r) => JSON.stringify(r)).join(' ')}`,
    );
  }
  return { command, operand: rest[0] ?? null, options: parsed.values };
}

/** Reads `--dialect` (`quartz` or `unix`, default none) with a usage error naming it. */
export function dialectOption(value: string | undefined): CronDialect | undefined {
  if (value === undefined) return undefined;
  if (value !== 'quartz' && value !== 'unix') {
    throw new UsageError(`--dialect must be quartz or unix, got ${JSON.stringify(value)}`);
  }
  return value;
}

/** Reads a positive integer option (`-n`, `--limit`) with a usage error naming it. */
export function integerOption(
  name: string,
  value: string | undefined,
  fallback: number,
  max: number,
): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > max) {
    throw new UsageError(
      `--${name} must be an integer from 1 to ${max}, got ${JSON.stringify(value)}`,
    );
  }
  return n;
}
