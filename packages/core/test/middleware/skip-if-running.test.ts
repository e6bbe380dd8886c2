import { describe, expect, it } from 'vitest';
import { skipIfRunning } from '../../src/middleware/skip-if-running.js';
import { compose } from '../../src/middleware.js';
import { makeContext } from './context.js';

describe('skipIfRunning()', () => {
  it('skips a run of the same job while the previous one is running, then allows it again', async () => {
    const { ctx, clock, logs } = makeContext();
    let runs = 0;
    const run = compose([skipIfRunning()], async (c) => {
      runs++;
      await c.clock.sleep(1000);
    });
    const first = run(ctx);
    await clock.flush();
    await run({ ...ctx, fireAt: new Date(ctx.fireAt.getTime() + 500) }); // resolves at once
    expect(runs).toBe(1);
    expect(logs.some((l) => l.level === 'info' && l.message.includes('skipped'))).toBe(true);
    await clock.advance(1000);
    await first;
    const third = run({ ...ctx, fireAt: new Date(ctx.fireAt.getTime() + 1000) });
    await clock.advance(1000);
    await third;
    expect(runs).toBe(2);
  });

  it('guards each job name separately', async () => {
    const { ctx, clock } = makeContext();
    const started: string[] = [];
    const run = compose([skipIfRunning()], async (c) => {
      started.push(c.job);
      await c.clock.sleep(1000);
    });
    const a = run(ctx);
    const b = run({ ...ctx, job: 'job-b' });
    await clock.advance(1000);
    await Promise.all([a, b]);
    expect(started).toEqual(['job-a', 'job-b']);
  });

  it('releases the guard when a run fails', async () => {
    const { ctx } = makeContext();
    let runs = 0;
    const run = compose([skipIfRunning()], () => {
      runs++;
      throw new Error('fail');
    });
    await expect(run(ctx)).rejects.toThrow('fail');
    await expect(run(ctx)).rejects.toThrow('fail');
    expect(runs).toBe(2);
  });

  it('keeps state per middleware instance', async () => {
    const { ctx, clock } = makeContext();
    let runs = 0;
    const job = async () => {
      runs++;
      await clock.sleep(100);
    };
    const one = compose([skipIfRunning()], job);
    const two = compose([skipIfRunning()], job);
    const p = Promise.all([one(ctx), two(ctx)]);
    await clock.advance(100);
    await p;
    expect(runs).toBe(2);
  });
});
