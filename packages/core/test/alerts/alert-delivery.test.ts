import { afterEach, describe, expect, it } from 'vitest';
import { openAlert } from '../../src/alerts/alert.js';
import {
  type AlertDeliveryOptions,
  createAlertDelivery,
  type DeliveryFailure,
} from '../../src/alerts/alert-delivery.js';
import { callbackNotifier } from '../../src/alerts/callback-notifier.js';
import type { AlertEvent, Notifier } from '../../src/alerts/notifier.js';
import { NotifyFailedError } from '../../src/alerts/notify-errors.js';
import { isFleetcronError } from '../../src/errors.js';
import { type FleetcronEvent, subscribe } from '../../src/events.js';
import { FakeClock } from '../../src/fake-clock.js';

const clock = new FakeClock();
const event: AlertEvent = {
  action: 'opened',
  alert: openAlert(
    { kind: 'run_failed', severity: 'critical', job: 'billing', summary: 'billing failed' },
    clock.now(),
  ),
};

/** Records delivery-failure events published on the channel while a test runs. */
const events: FleetcronEvent[] = [];
let unsubscribe = subscribe((e) => {
  if (e.type === 'alert.delivery_failed') events.push(e);
});
afterEach(() => {
  events.length = 0;
  unsubscribe();
  unsubscribe = subscribe((e) => {
    if (e.type === 'alert.delivery_failed') events.push(e);
  });
});

/** A notifier that fails its first `failures` calls, recording the fake time of each call. */
function flaky(failures: number, error: () => Error = () => new Error('receiver down')) {
  const calls: number[] = [];
  const notifier = callbackNotifier(
    () => {
      calls.push(clock.monotonic());
      if (calls.length <= failures) throw error();
    },
    { name: 'flaky' },
  );
  return { calls, notifier };
}

const exact: AlertDeliveryOptions = {
  clock,
  jitter: 'none',
  instanceId: 'i1',
  backoff: { initialMs: 1000, maxMs: 8000 },
};

describe('createAlertDelivery(notifier, options)', () => {
  it('delivers on the first attempt without publishing anything', async () => {
    const { calls, notifier } = flaky(0);
    const result = await createAlertDelivery(notifier, exact).deliver(event);
    expect(result).toEqual({ delivered: true, attempts: 1, error: null });
    expect(calls).toHaveLength(1);
    expect(events).toEqual([]);
  });

  it('retries with exponential backoff and publishes each failed attempt', async () => {
    const { calls, notifier } = flaky(3);
    const start = clock.monotonic();
    const pending = createAlertDelivery(notifier, exact).deliver(event);
    await clock.advance(20_000);
    expect(await pending).toEqual({ delivered: true, attempts: 4, error: null });
    expect(calls.map((t) => t - start)).toEqual([0, 1000, 3000, 7000]);
    expect(
      events.map((e) => e.type === 'alert.delivery_failed' && [e.attempt, e.retryInMs]),
    ).toEqual([
      [1, 1000],
      [2, 2000],
      [3, 4000],
    ]);
    expect(events[0]).toMatchObject({
      instanceId: 'i1',
      job: 'billing',
      notifier: 'flaky',
      alertId: event.alert.id,
      alertKey: event.alert.key,
      action: 'opened',
    });
  });

  it('gives up after `attempts`, resolving (never rejecting) and calling onError once', async () => {
    const { calls, notifier } = flaky(Number.POSITIVE_INFINITY);
    const failures: Array<[Error, DeliveryFailure]> = [];
    const pending = createAlertDelivery(notifier, {
      ...exact,
      attempts: 3,
      onError: (error, failure) => failures.push([error, failure]),
    }).deliver(event);
    await clock.advance(60_000);
    const result = await pending;
    expect(result.delivered).toBe(false);
    expect(result.attempts).toBe(3);
    expect(result.error?.message).toBe('receiver down');
    expect(calls).toHaveLength(3);
    expect(failures).toHaveLength(1);
    expect(failures[0]?.[1]).toMatchObject({ notifier: 'flaky', attempts: 3, event });
    const last = events.at(-1);
    expect(last?.type === 'alert.delivery_failed' && last.retryInMs).toBeNull();
  });

  it('bounds one attempt by timeoutMs even when the notifier ignores its signal', async () => {
    let signal: AbortSignal | undefined;
    const hanging: Notifier = {
      name: 'hanging',
      notify: (_event, options) => {
        signal = options.signal;
        return new Promise<void>(() => {}); // never settles, ignores the signal
      },
    };
    const pending = createAlertDelivery(hanging, {
      ...exact,
      attempts: 1,
      timeoutMs: 2000,
    }).deliver(event);
    await clock.advance(1999);
    expect(signal?.aborted).toBe(false);
    await clock.advance(1);
    const result = await pending;
    expect(signal?.aborted).toBe(true);
    expect(result.delivered).toBe(false);
    expect(isFleetcronError(result.error, 'NOTIFY_TIMEOUT')).toBe(true);
  });

  it('bounds the whole delivery by maxElapsedMs: no retry that would start past it', async () => {
    const { calls, notifier } = flaky(Number.POSITIVE_INFINITY);
    const start = clock.monotonic();
    const pending = createAlertDelivery(notifier, {
      ...exact,
      attempts: 100,
      maxElapsedMs: 10_000,
    }).deliver(event);
    await clock.advance(60_000);
    const result = await pending;
    expect(result.delivered).toBe(false);
    // attempts at 0, 1 s, 3 s, 7 s; the next would wait 8 s, to 15 s, past the 10 s bound
    expect(calls.map((t) => t - start)).toEqual([0, 1000, 3000, 7000]);
  });

  it('gives up at once on a failure that says it is not retryable', async () => {
    const { calls, notifier } = flaky(
      Number.POSITIVE_INFINITY,
      () => new NotifyFailedError('flaky', 'HTTP 400', { retryable: false, status: 400 }),
    );
    const result = await createAlertDelivery(notifier, exact).deliver(event);
    expect(result).toMatchObject({ delivered: false, attempts: 1 });
    expect(calls).toHaveLength(1);
  });

  it('stops when its signal aborts, during an attempt or between attempts', async () => {
    const { calls, notifier } = flaky(Number.POSITIVE_INFINITY);
    const controller = new AbortController();
    const pending = createAlertDelivery(notifier, exact).deliver(event, {
      signal: controller.signal,
    });
    await clock.advance(1500); // attempts at 0 and 1000, now waiting 2000
    controller.abort(new Error('shutting down'));
    const result = await pending;
    expect(result).toMatchObject({ delivered: false, attempts: 2 });
    await clock.advance(60_000);
    expect(calls).toHaveLength(2);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('contains a throwing onError and a non-Error rejection', async () => {
    const notifier = callbackNotifier(() => Promise.reject('plain string'));
    const result = await createAlertDelivery(notifier, {
      ...exact,
      attempts: 1,
      onError: () => {
        throw new Error('faulty onError');
      },
    }).deliver(event);
    expect(result.delivered).toBe(false);
    expect(result.error).toBeInstanceOf(Error);
    expect(result.error?.message).toContain('plain string');
  });

  it('leaves no timer behind after a delivery', async () => {
    const { notifier } = flaky(1);
    const pending = createAlertDelivery(notifier, exact).deliver(event);
    await clock.advance(5000);
    expect((await pending).delivered).toBe(true);
    expect(clock.pendingTimers()).toBe(0);
  });

  it.each<[string, unknown, string]>([
    ['zero attempts', { attempts: 0 }, 'delivery.attempts'],
    ['a negative timeout', { timeoutMs: -1 }, 'delivery.timeoutMs'],
    ['a zero time bound', { maxElapsedMs: 0 }, 'delivery.maxElapsedMs'],
    ['a backoff factor below 1', { backoff: { factor: 0.5 } }, 'delivery.backoff.factor'],
    ['an unknown jitter', { jitter: 'half' }, 'delivery.jitter'],
    ['a retryIf that is not a function', { retryIf: true }, 'delivery.retryIf'],
    ['an onError that is not a function', { onError: 'log' }, 'delivery.onError'],
    ['a clock that is not a Clock', { clock: {} }, 'delivery.clock'],
  ])('refuses %s at creation, naming the field', (_label, options, field) => {
    let error: unknown;
    try {
      createAlertDelivery(flaky(0).notifier, options as AlertDeliveryOptions);
    } catch (e) {
      error = e;
    }
    expect(isFleetcronError(error, 'INVALID_OPTION')).toBe(true);
    expect((error as { field: string }).field).toBe(field);
  });

  it('resolves (never rejects) for an event that is not one, calling onError', async () => {
    const { calls, notifier } = flaky(0);
    const errors: Error[] = [];
    const result = await createAlertDelivery(notifier, {
      ...exact,
      onError: (error) => errors.push(error),
    }).deliver({ action: 'opened' } as never);
    expect(result.delivered).toBe(false);
    expect(result.attempts).toBe(0);
    expect(isFleetcronError(result.error, 'INVALID_OPTION')).toBe(true);
    expect(errors).toEqual([result.error]);
    expect(calls).toEqual([]);
  });

  it('refuses something that is not a notifier', () => {
    expect(() => createAlertDelivery({ name: 'x' } as never)).toThrow(
      /notifier: must be a Notifier/,
    );
  });
});

describe('callbackNotifier(callback)', () => {
  it('passes the event and the attempt signal to the callback', async () => {
    const seen: Array<[AlertEvent, boolean]> = [];
    const notifier = callbackNotifier((e, { signal }) => {
      seen.push([e, signal instanceof AbortSignal]);
    });
    expect(notifier.name).toBe('callback');
    expect((await createAlertDelivery(notifier, exact).deliver(event)).delivered).toBe(true);
    expect(seen).toEqual([[event, true]]);
  });

  it('refuses a callback that is not a function and an empty name', () => {
    expect(() => callbackNotifier(42 as never)).toThrow(/callback: must be a function/);
    expect(() => callbackNotifier(() => {}, { name: '' })).toThrow(/name: must be a non-empty/);
  });
});
