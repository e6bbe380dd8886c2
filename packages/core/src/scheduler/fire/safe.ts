import { type FleetcronEvent, publish } from '../../events.js';
import { type Logger, silentLogger } from '../../logger.js';

type Level = keyof Logger;
const LEVELS: readonly Level[] = ['debug', 'info', 'warn', 'error'];

/** What {@link safeLogger} makes of the silent (default) logger: one shared, frozen no-op. */
const SILENT: Logger = Object.freeze({ debug() {}, info() {}, warn() {}, error() {} });

/** Whether `logger` is the silent logger (or the shared no-op {@link safeLogger} makes of it). */
export function isSilentLogger(logger: Logger): boolean {
  return logger === silentLogger || logger === SILENT;
}

/**
 * Wraps a user logger so that a throwing logger never disturbs a fire, and attaches `fields`
 * (job name, fire time) to every line. `fields` may be a function, called at the first line
 * (a fire that logs nothing does not build them). The silent default logger stays a shared
 * no-op: nothing is built per fire.
 */
export function safeLogger(
  logger: Logger,
  fields: Record<string, unknown> | (() => Record<string, unknown>) = {},
): Logger {
  if (isSilentLogger(logger)) return SILENT;
  let known = typeof fields === 'function' ? null : fields;
  const wrapped = {} as Logger;
  for (const level of LEVELS) {
    wrapped[level] = (message, more) => {
      try {
        known ??= (fields as () => Record<string, unknown>)();
        logger[level](message, more ? { ...known, ...more } : { ...known });
      } catch {
        // a faulty logger must never break a fire
      }
    };
  }
  return wrapped;
}

/**
 * The logger of one fire: job, fire time and instance on every line (nothing built when silent).
 * A throwing logger never disturbs the fire, as with {@link safeLogger}.
 */
export function fireLogger(
  logger: Logger,
  job: string,
  fireAt: number,
  instanceId: string,
): Logger {
  if (isSilentLogger(logger)) return SILENT;
  return new FireLogger(logger, job, fireAt, instanceId);
}

/**
 * What {@link fireLogger} makes of a user logger: one object per fire, its methods on the
 * prototype (every claim has one and most fires log nothing, so {@link safeLogger}'s closures
 * per fire were most of its cost). Internal only: its methods are always called on it, never
 * detached; a job's `ctx.log` wraps it with {@link safeLogger}.
 */
class FireLogger implements Logger {
  constructor(
    private readonly logger: Logger,
    private readonly job: string,
    private readonly fireAt: number,
    private readonly instanceId: string,
  ) {}

  debug(message: string, fields?: Record<string, unknown>): void {
    this.write('debug', message, fields);
  }

  info(message: string, fields?: Record<string, unknown>): void {
    this.write('info', message, fields);
  }

  warn(message: string, fields?: Record<string, unknown>): void {
    this.write('warn', message, fields);
  }

  error(message: string, fields?: Record<string, unknown>): void {
    this.write('error', message, fields);
  }

  private write(level: Level, message: string, more?: Record<string, unknown>): void {
    try {
      const { job, instanceId } = this;
      const fire = { job, fireAt: new Date(this.fireAt).toISOString(), instanceId };
      this.logger[level](message, more ? { ...fire, ...more } : fire);
    } catch {
      // a faulty logger must never break a fire
    }
  }
}

/** Publishes an event; a subscriber that throws never reaches the scheduler. */
export function safePublish(event: FleetcronEvent): void {
  try {
    publish(event);
  } catch {
    // diagnostics_channel subscribers registered without subscribe() may throw
  }
}

/** Calls `fn`, turning a synchronous throw into a rejection. */
export function safeCall<T>(fn: () => T | Promise<T>): Promise<T> {
  try {
    return Promise.resolve(fn());
  } catch (error) {
    return Promise.reject(error);
  }
}
