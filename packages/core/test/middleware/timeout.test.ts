import { describe, expect, it } from 'vitest';
import { isFleetcronError, JobTimeoutError } from '../../src/errors.js';
import { timeout } from '../../src/middleware/timeout.js';
import { compose, type JobContext } from '../../src/middleware.js';
import { makeContext, settled } from './context.js';

describe('timeout(ms)', () => {
  it.each([0, -1, Number.NaN, Number.POSITIVE_INFINITY, '10' as unknown as number])(
    'rejects %s at creation with InvalidOptionError(timeout)',
    (ms) => {
      let error: unknown;
      try {
        timeout(ms);
      } catch (e) {
        error = e;
      }
      expect(isFleetcronError(error, 'INVALID_OPTION')).toBe(true);
      expect((error as { field: string }).field).toBe('timeout');
    },
  );

  it('lets a run that finishes in time through and clears its timer', async () => {
    const { ctx, clock } = makeContext();
    const run = compose([timeout(1000)], (c) => c.clock.sleep(500));
    const outcome = settled(run(ctx));
    await clock.advance(500);
    expect(await outcome).toEqual({ ok: true, value: undefined });
    expect(clock.pendingTimers()).toBe(0);
  });

  it('clears its timer when the run fails early, and passes the failure on', async () => {
    const { ctx, clock } = makeContext();
    const run = compose([timeout(1000)], () => {
      throw new Error('early');
    });
    await expect(run(ctx)).rejects.toThrow('early');
    expect(clock.pendingTimers()).toBe(0);
  });

  it('aborts the signal with JobTimeoutError and rejects when time is up', async () => {
    const { ctx, clock } = makeContext();
    let seen: AbortSignal | undefined;
    const run = compose([timeout(1000)], (c) => {
      seen = c.signal;
      return c.clock.sleep(60_000, c.signal);
    });
    const outcome = settled(run(ctx));
    await clock.advance(999);
    expect(seen?.aborted).toBe(false);
    await clock.advance(1);
    const result = await outcome;
    expect(result.ok).toBe(false);
    const error = (result as { error: unknown }).error;
    expect(error).toBeInstanceOf(JobTimeoutError);
    expect(isFleetcronError(error, 'JOB_TIMEOUT')).toBe(true);
    expect(seen?.aborted).toBe(true);
    expect(seen?.reason).toBe(error);
    expect(ctx.signal.aborted).toBe(false); // the caller's signal is untouched
    expect(clock.pendingTimers()).toBe(0);
  });

  it('rejects on time even when the job ignores its signal, and swallows its late outcome', async () => {
    const { ctx, clock } = makeContext();
    let finishLate: ((value: unknown) => void) | undefined;
    const run = compose([timeout(100)], () => new Promise((_, reject) => (finishLate = reject)));
    const outcome = settled(run(ctx));
    await clock.advance(100);
    const result = await outcome;
    expect(result.ok).toBe(false);
    expect((result as { error: unknown }).error).toBeInstanceOf(JobTimeoutError);
    finishLate?.(new Error('late failure')); // must not become an unhandled rejection
    await clock.flush();
  });

  it("forwards the caller's abort to the job", async () => {
    const { ctx, controller } = makeContext();
    let seen: JobContext | undefined;
    const run = compose([timeout(1000)], (c) => {
      seen = c;
      return new Promise<void>((resolve) => c.signal.addEventListener('abort', () => resolve()));
    });
    const outcome = run(ctx);
    controller.abort(new Error('lease lost'));
    await outcome;
    expect(seen?.signal.aborted).toBe(true);
    expect((seen?.signal.reason as Error | undefined)?.message).toBe('lease lost');
  });

  it('keeps the rest of the context', async () => {
    const { ctx, clock } = makeContext({ attempt: 3, token: 11 });
    let seen: JobContext | undefined;
    await compose([timeout(10)], (c) => {
      seen = c;
    })(ctx);
    expect(seen).toMatchObject({ job: 'job-a', attempt: 3, token: 11, clock });
    expect(seen?.signal).not.toBe(ctx.signal);
  });
});
