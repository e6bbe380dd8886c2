import { describe, expect, it } from 'vitest';
import { at, FakeClock, MemoryLock, Scheduler } from '../../src/index.js';
import { BatchLock } from './batch-lock.js';

/** A logger that keeps every line with its fields. */
function recordingLogger() {
  const lines: { level: string; message: string; fields: Record<string, unknown> | undefined }[] =
    [];
  const at = (level: string) => (message: string, fields?: Record<string, unknown>) =>
    void lines.push({ level, message, fields });
  return {
    lines,
    logger: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') },
  };
}

async function oneFire(options: {
  logger?: ReturnType<typeof recordingLogger>['logger'];
  fail?: boolean;
}) {
  const fake = new FakeClock(Date.UTC(2026, 0, 1));
  const lock = new BatchLock(new MemoryLock({ clock: fake }));
  if (options.fail) lock.failClaims = new Error('backend down');
  const s = new Scheduler({
    ...{ lock, clock: fake, instanceId: 'i1' },
    ...(options.logger ? { logger: options.logger } : {}),
  });
  const fireAt = fake.now() + 1_000;
  const ran: unknown[] = [];
  s.add({
    name: 'report',
    trigger: at(fireAt),
    run: (ctx) => {
      ctx.log.info('job says hi', { rows: 3 });
      ran.push(ctx.fireAt.getTime());
    },
  });
  s.start();
  await fake.advanceTo(fireAt);
  for (let i = 0; i < 10; i++) await fake.flush();
  const stopping = s.stop();
  await fake.advance(0);
  await stopping;
  return { fireAt, ran };
}

describe("a fire's log lines", () => {
  it('carry the job, the fire time and the instance (built only when a line is logged)', async () => {
    const { lines, logger } = recordingLogger();
    const { fireAt } = await oneFire({ logger, fail: true });
    const failed = lines.find((l) => l.message.startsWith('fleetcron: claim failed'));
    expect(failed?.level).toBe('warn');
    expect(failed?.fields).toMatchObject({
      job: 'report',
      fireAt: new Date(fireAt).toISOString(),
      instanceId: 'i1',
    });
    expect(failed?.fields?.error).toMatchObject({ message: 'backend down' });
  });

  it('ctx.log adds the lease token; with the default silent logger it is a harmless no-op', async () => {
    const { lines, logger } = recordingLogger();
    const logged = await oneFire({ logger });
    expect(logged.ran).toEqual([logged.fireAt]);
    const hi = lines.find((l) => l.message === 'job says hi');
    expect(hi?.fields).toMatchObject({ job: 'report', instanceId: 'i1', rows: 3 });
    expect(typeof hi?.fields?.token).toBe('number');
    const silent = await oneFire({});
    expect(silent.ran).toEqual([silent.fireAt]);
  });
});
