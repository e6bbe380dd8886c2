import { describe, expect, it } from 'vitest';
import { isFleetcronError, JobTimeoutError, LeaseLostError } from '../../src/errors.js';
import { type RetryOptions, retry } from '../../src/middleware/retry.js';
import { timeout } from '../../src/middleware/timeout.js';
import { compose, type JobContext, type Middleware } from '../../src/middleware.js';
import { makeContext, settled } from './context.js';

/** A job that fails `failures` times, recording each attempt's ctx.attempt and clock time. */
function flaky(failures: number, error: () => unknown = () => new Error('flaky')) {
  const calls: { attempt: number; at: number }[] = [];
  const handler = (ctx: JobContext) => {
    calls.push({ attempt: ctx.attempt, at: ctx.clock.now() });
    if (calls.length <= failures) throw error();
  };
  return { calls, handler };
}

describe('retry(options)', () => {
  it.each<[string, unknown, string]>([
    ['missing attempts', {}, 'retry.attempts'],
    ['zero attempts', { attempts: 0 }, 'retry.attempts'],
    ['fractional attempts', { attempts: 1.5 }, 'retry.attempts'],
    ['bad initialMs', { attempts: 2, backoff: { initialMs: 0 } }, 'retry.backoff.initialMs'],
    ['bad maxMs', { attempts: 2, backoff: { maxMs: -5 } }, 'retry.backoff.maxMs'],
    ['factor below 1', { attempts: 2, backoff: { factor: 0.5 } }, 'retry.backoff.factor'],
    ['unknown jitter', { attempts: 2, jitter: 'half' }, 'retry.jitter'],
    ['retryIf not a function', { attempts: 2, retryIf: true }, 'retry.retryIf'],
    ['random not a function', { attempts: 2, random: 0.5 }, 'retry.random'],
  ])('rejects %s at creation', (_label, options, field) => {
    let error: unknown;
    try {
      retry(options as RetryOptions);
    } catch (e) {
      error = e;
    }
    expect(isFleetcronError(error, 'INVALID_OPTION')).toBe(true);
    expect((error as { field: string }).field).toBe(field);
  });

  it('runs once when the first attempt succeeds', async () => {
    const { ctx, clock } = makeContext();
    const { calls, handler } = flaky(0);
    await compose([retry({ attempts: 3 })], handler)(ctx);
    expect(calls).toEqual([{ attempt: 1, at: clock.now() }]);
  });

  it('retries with exponential backoff, capped at maxMs, and numbers the attempts', async () => {
    const { ctx, clock, logs } = makeContext();
    const start = clock.now();
    const { calls, handler } = flaky(4);
    const mw = retry({
      attempts: 5,
      backoff: { initialMs: 100, maxMs: 300, factor: 2 },
      jitter: 'none',
    });
    const outcome = settled(compose([mw], handler)(ctx));
    await clock.advance(10_000);
    expect(await outcome).toEqual({ ok: true, value: undefined });
    // waits: 100, 200, 300 (capped from 400), 300 (capped from 800)
    expect(calls.map((c) => c.at - start)).toEqual([0, 100, 300, 600, 900]);
    expect(calls.map((c) => c.attempt)).toEqual([1, 2, 3, 4, 5]);
    expect(logs.filter((l) => l.level === 'warn')).toHaveLength(4);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('applies full jitter: delay = random() * min(maxMs, initialMs * factor^(n-1))', async () => {
    const { ctx, clock } = makeContext();
    const start = clock.now();
    const { calls, handler } = flaky(3);
    const mw = retry({
      attempts: 4,
      backoff: { initialMs: 1000, maxMs: 10_000, factor: 3 },
      random: () => 0.5,
    });
    const outcome = settled(compose([mw], handler)(ctx));
    await clock.advance(60_000);
    expect((await outcome).ok).toBe(true);
    // waits: 0.5*1000, 0.5*3000, 0.5*9000
    expect(calls.map((c) => c.at - start)).toEqual([0, 500, 2000, 6500]);
  });

  it('rethrows the last error once attempts are used up', async () => {
    const { ctx, clock } = makeContext();
    let n = 0;
    const handler = () => {
      n++;
      throw new Error(`failure ${n}`);
    };
    const outcome = settled(
      compose([retry({ attempts: 3, backoff: { initialMs: 10 } })], handler)(ctx),
    );
    await clock.advance(1000);
    const result = await outcome;
    expect(n).toBe(3);
    expect((result as { error: Error }).error.message).toBe('failure 3');
  });

  it('stops when retryIf says no, and gives retryIf the error and attempt ctx', async () => {
    const { ctx, clock } = makeContext();
    const seen: [string, number][] = [];
    const { calls, handler } = flaky(5, () => new Error('fatal'));
    const mw = retry({
      attempts: 5,
      backoff: { initialMs: 10 },
      retryIf: (error, c) => {
        seen.push([(error as Error).message, c.attempt]);
        return c.attempt < 2;
      },
    });
    const outcome = settled(compose([mw], handler)(ctx));
    await clock.advance(1000);
    expect((await outcome).ok).toBe(false);
    expect(calls).toHaveLength(2);
    expect(seen).toEqual([
      ['fatal', 1],
      ['fatal', 2],
    ]);
  });

  it('never retries a LeaseLostError', async () => {
    const { ctx, clock } = makeContext();
    const { calls, handler } = flaky(5, () => new LeaseLostError('job-a', 0));
    const outcome = settled(compose([retry({ attempts: 5 })], handler)(ctx));
    await clock.advance(100_000);
    expect((await outcome).ok).toBe(false);
    expect(calls).toHaveLength(1);
  });

  it('never retries once the signal is aborted', async () => {
    const { ctx, clock, controller } = makeContext();
    const { calls, handler } = flaky(5);
    const run = compose([retry({ attempts: 5 })], (c) => {
      controller.abort(new LeaseLostError('job-a', 0));
      return handler(c);
    });
    const outcome = settled(run(ctx));
    await clock.advance(100_000);
    expect(((await outcome) as { error: Error }).error.message).toBe('flaky');
    expect(calls).toHaveLength(1);
  });

  it('cuts the backoff sleep short when the signal aborts, rejecting with its reason', async () => {
    const { ctx, clock, controller } = makeContext();
    const { calls, handler } = flaky(5);
    const outcome = settled(
      compose(
        [retry({ attempts: 5, backoff: { initialMs: 10_000 }, jitter: 'none' })],
        handler,
      )(ctx),
    );
    await clock.advance(5000);
    const reason = new LeaseLostError('job-a', 0);
    controller.abort(reason);
    const result = await outcome;
    expect((result as { error: unknown }).error).toBe(reason);
    expect(calls).toHaveLength(1);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('[retry(), timeout()] times out each attempt and retries it', async () => {
    const { ctx, clock } = makeContext();
    const attempts: number[] = [];
    const handler = async (c: JobContext) => {
      attempts.push(c.attempt);
      if (c.attempt < 3) await c.clock.sleep(60_000, c.signal); // hangs until its timeout
    };
    const chain: Middleware[] = [
      retry({ attempts: 3, backoff: { initialMs: 100 }, jitter: 'none' }),
      timeout(1000),
    ];
    const outcome = settled(compose(chain, handler)(ctx));
    await clock.advance(10_000);
    expect((await outcome).ok).toBe(true);
    expect(attempts).toEqual([1, 2, 3]);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('[timeout(), retry()] bounds all attempts together and stops retrying', async () => {
    const { ctx, clock } = makeContext();
    const attempts: number[] = [];
    const handler = (c: JobContext) => {
      attempts.push(c.attempt);
      throw new Error('always');
    };
    const chain: Middleware[] = [
      timeout(2500),
      retry({ attempts: 10, backoff: { initialMs: 1000, factor: 1 }, jitter: 'none' }),
    ];
    const outcome = settled(compose(chain, handler)(ctx));
    await clock.advance(60_000);
    const result = await outcome;
    expect((result as { error: unknown }).error).toBeInstanceOf(JobTimeoutError);
    expect(attempts).toEqual([1, 2, 3]); // at 0, 1000, 2000; the timeout hits during the next wait
    expect(clock.pendingTimers()).toBe(0);
  });
});
