import { FakeClock } from '../../src/fake-clock.js';
import type { Logger } from '../../src/logger.js';
import type { JobContext } from '../../src/middleware.js';

/** One captured log line. */
export interface LogLine {
  level: 'debug' | 'info' | 'warn' | 'error';
  message: string;
  fields: Record<string, unknown> | undefined;
}

/** Builds a JobContext by hand, on a FakeClock, with a logger that records its lines. */
export function makeContext(overrides: Partial<JobContext> = {}): {
  ctx: JobContext;
  clock: FakeClock;
  logs: LogLine[];
  controller: AbortController;
} {
  const clock = overrides.clock instanceof FakeClock ? overrides.clock : new FakeClock();
  const logs: LogLine[] = [];
  const line = (level: LogLine['level']) => (message: string, fields?: Record<string, unknown>) =>
    logs.push({ level, message, fields });
  const log: Logger = {
    debug: line('debug'),
    info: line('info'),
    warn: line('warn'),
    error: line('error'),
  };
  const controller = new AbortController();
  const lease = {
    token: overrides.token ?? 7,
    remainingMs: () => 30_000,
    assertValid: () => {},
  };
  const ctx: JobContext = {
    job: 'job-a',
    fireAt: new Date(clock.now()),
    startedAt: new Date(clock.now()),
    instanceId: 'instance-1',
    attempt: 1,
    token: 7,
    signal: controller.signal,
    log,
    clock,
    lease,
    ...overrides,
  };
  return { ctx, clock, logs, controller };
}

/** Marks a promise's rejection as handled now and lets a test await its outcome later. */
export function settled<T>(
  promise: Promise<T>,
): Promise<{ ok: true; value: T } | { ok: false; error: unknown }> {
  return promise.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );
}
