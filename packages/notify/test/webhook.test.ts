import {
  createAlertDelivery,
  isFleetcronError,
  type NotifyFailedError,
  realClock,
} from '@fleetcron/core';
import { type HttpReceiver, type HttpReceiverOptions, startHttpReceiver } from '@fleetcron/testkit';
import { describe, expect, it } from 'vitest';
import { SIGNATURE_HEADER, verifyWebhookSignature } from '../src/signature.js';
import { type WebhookBody, webhookNotifier } from '../src/webhook-notifier.js';
import { closers, deliveryFailures, opened, resolved } from './helpers.js';

const SECRET = 'a-shared-secret-of-32-characters';

/** A receiver that answers 401 unless the request carries a valid signature for SECRET. */
async function verifyingReceiver(options: HttpReceiverOptions = {}): Promise<HttpReceiver> {
  const receiver = await startHttpReceiver({
    respond: (request) => {
      const check = verifyWebhookSignature({
        body: request.body,
        header: request.headers[SIGNATURE_HEADER],
        secret: SECRET,
      });
      return check.valid ? { status: 204 } : { status: 401, body: check.problem };
    },
    ...options,
  });
  closers.push(() => receiver.close());
  return receiver;
}

const fast = { clock: realClock, jitter: 'none', backoff: { initialMs: 20, maxMs: 100 } } as const;

describe('webhookNotifier', () => {
  it('POSTs the event as signed JSON that the receiver verifies', async () => {
    const receiver = await verifyingReceiver();
    const notifier = webhookNotifier({
      url: `${receiver.url}/alerts`,
      secret: SECRET,
      headers: { authorization: 'Bearer t0ken' },
      link: (alert) => `https://ops.example/fleet#/alerts/${alert.id}`,
    });
    const result = await createAlertDelivery(notifier, fast).deliver(opened);
    expect(result).toEqual({ delivered: true, attempts: 1, error: null });
    const [request] = receiver.requests;
    expect(request).toMatchObject({ method: 'POST', path: '/alerts', answer: 204 });
    expect(request?.headers).toMatchObject({
      'content-type': 'application/json',
      authorization: 'Bearer t0ken',
      'x-fleetcron-event': 'alert.opened',
      'x-fleetcron-delivery': `${opened.alert.id}.opened`,
    });
    const body = JSON.parse(request?.body ?? '') as WebhookBody;
    expect(body).toEqual({
      version: 1,
      action: 'opened',
      alert: { ...opened.alert },
      link: `https://ops.example/fleet#/alerts/${opened.alert.id}`,
    });
  });

  it('is refused by the receiver with another secret, and does not retry a 401', async () => {
    const receiver = await verifyingReceiver();
    const notifier = webhookNotifier({
      url: receiver.url,
      secret: 'another-secret-of-32-characters!',
    });
    const result = await createAlertDelivery(notifier, fast).deliver(opened);
    expect(result.delivered).toBe(false);
    expect(result.attempts).toBe(1);
    expect(isFleetcronError(result.error, 'NOTIFY_FAILED')).toBe(true);
    expect(result.error as NotifyFailedError).toMatchObject({ status: 401, retryable: false });
    expect(result.error?.message).toContain('mismatch');
    expect(receiver.requests.map((r) => r.answer)).toEqual([401]);
  });

  it('a captured request replayed later fails verification (its timestamp is signed)', async () => {
    const receiver = await verifyingReceiver();
    await createAlertDelivery(webhookNotifier({ url: receiver.url, secret: SECRET }), fast).deliver(
      resolved,
    );
    const [request] = receiver.requests;
    const replay = {
      body: request?.body ?? '',
      header: request?.headers[SIGNATURE_HEADER],
      secret: SECRET,
    };
    expect(verifyWebhookSignature(replay).valid).toBe(true);
    expect(verifyWebhookSignature({ ...replay, nowSec: Date.now() / 1000 + 301 })).toEqual({
      valid: false,
      problem: 'expired',
    });
    expect(
      verifyWebhookSignature({ ...replay, body: replay.body.replace('resolved', 'opened') }),
    ).toEqual({ valid: false, problem: 'mismatch' });
  });

  it('retries after real 503 answers and is delivered on the third attempt', async () => {
    const receiver = await verifyingReceiver();
    receiver.failNext(2, 503);
    const notifier = webhookNotifier({ url: receiver.url, secret: SECRET });
    const result = await createAlertDelivery(notifier, fast).deliver(opened);
    expect(result).toEqual({ delivered: true, attempts: 3, error: null });
    expect(receiver.requests.map((r) => r.answer)).toEqual([503, 503, 204]);
    // each attempt is signed anew, and the receiver can tell the retries are one delivery
    expect(new Set(receiver.requests.map((r) => r.headers['x-fleetcron-delivery'])).size).toBe(1);
    expect(deliveryFailures.map((e) => [e.attempt, e.retryInMs])).toEqual([
      [1, 20],
      [2, 40],
    ]);
    expect(deliveryFailures[0]?.error.message).toContain('HTTP 503');
  });

  it('a hanging receiver is bounded by the delivery timeout, and the next attempt succeeds', async () => {
    const receiver = await verifyingReceiver();
    receiver.hangNext(1);
    const notifier = webhookNotifier({ url: receiver.url, secret: SECRET });
    const result = await createAlertDelivery(notifier, { ...fast, timeoutMs: 1500 }).deliver(
      opened,
    );
    expect(result).toEqual({ delivered: true, attempts: 2, error: null });
    expect(receiver.requests.map((r) => r.answer)).toEqual(['hung', 204]);
    expect(isFleetcronError(deliveryFailures[0]?.error, 'NOTIFY_TIMEOUT')).toBe(true);
  });

  it("a hanging receiver is bounded by the notifier's own timeoutMs too", async () => {
    const receiver = await verifyingReceiver();
    receiver.hangNext(5);
    const notifier = webhookNotifier({ url: receiver.url, timeoutMs: 1000 });
    const result = await createAlertDelivery(notifier, { ...fast, attempts: 2 }).deliver(opened);
    expect(result.delivered).toBe(false);
    expect(result.attempts).toBe(2);
    expect(isFleetcronError(result.error, 'NOTIFY_TIMEOUT')).toBe(true);
    expect(receiver.requests.map((r) => r.answer)).toEqual(['hung', 'hung']);
  });

  it('a receiver that is gone is a retryable failure that names only the origin', async () => {
    const receiver = await startHttpReceiver();
    await receiver.close();
    const errors: Error[] = [];
    const notifier = webhookNotifier({ url: `${receiver.url}/secret-path?token=s3cret` });
    const result = await createAlertDelivery(notifier, {
      ...fast,
      attempts: 2,
      onError: (error) => errors.push(error),
    }).deliver(opened);
    expect(result.delivered).toBe(false);
    expect(result.attempts).toBe(2);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ code: 'NOTIFY_FAILED', retryable: true });
    expect(errors[0]?.message).toContain(receiver.url);
    expect(errors[0]?.message).not.toContain('s3cret');
  });

  it('sends unsigned requests without a secret', async () => {
    const receiver = await startHttpReceiver();
    closers.push(() => receiver.close());
    await createAlertDelivery(webhookNotifier({ url: receiver.url }), fast).deliver(opened);
    expect(receiver.requests[0]?.headers[SIGNATURE_HEADER]).toBeUndefined();
  });

  it.each<[string, object, string]>([
    ['no url', {}, 'webhook.url'],
    ['a relative url', { url: '/hook' }, 'webhook.url'],
    ['an ftp url', { url: 'ftp://example.com/x' }, 'webhook.url'],
    ['a short secret', { url: 'http://x.test', secret: 'short' }, 'webhook.secret'],
    ['a zero timeout', { url: 'http://x.test', timeoutMs: 0 }, 'webhook.timeoutMs'],
    ['a non-string header', { url: 'http://x.test', headers: { a: 1 } }, 'webhook.headers'],
    ['a link that is not a function', { url: 'http://x.test', link: 'x' }, 'webhook.link'],
    ['an empty name', { url: 'http://x.test', name: '' }, 'webhook.name'],
  ])('refuses %s, naming the field', (_label, options, field) => {
    let error: unknown;
    try {
      webhookNotifier(options as never);
    } catch (e) {
      error = e;
    }
    expect(isFleetcronError(error, 'INVALID_OPTION')).toBe(true);
    expect((error as { field: string }).field).toBe(field);
  });
});
