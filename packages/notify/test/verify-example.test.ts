import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { createAlertDelivery, realClock } from '@fleetcron/core';
import { describe, expect, it } from 'vitest';
import { alertReceiver } from '../examples/verify-webhook.js';
import type { WebhookBody } from '../src/webhook-notifier.js';
import { webhookNotifier } from '../src/webhook-notifier.js';
import { closers, opened } from './helpers.js';

const SECRET = 'a-shared-secret-of-32-characters';

describe('the README verification example (examples/verify-webhook.ts)', () => {
  it('is quoted in the README as it is', () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    const example = readFileSync(new URL('../examples/verify-webhook.ts', import.meta.url), 'utf8');
    const code = example.slice(example.indexOf('import '));
    expect(readme).toContain(code.trim());
  });

  it('accepts a signed delivery once, counts retries as one, and refuses a wrong signature', async () => {
    const got: WebhookBody[] = [];
    const server = alertReceiver(SECRET, (body) => got.push(body));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(() => new Promise((resolve) => server.close(() => resolve())));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    const options = { clock: realClock, jitter: 'none', backoff: { initialMs: 10 } } as const;
    const delivery = createAlertDelivery(webhookNotifier({ url, secret: SECRET }), options);
    expect((await delivery.deliver(opened)).delivered).toBe(true);
    expect((await delivery.deliver(opened)).delivered).toBe(true); // the same delivery again
    expect(got).toEqual([
      JSON.parse(JSON.stringify({ version: 1, action: 'opened', alert: opened.alert })),
    ]);
    const forged = createAlertDelivery(
      webhookNotifier({ url, secret: 'another-secret-of-32-characters!' }),
      options,
    );
    const result = await forged.deliver(opened);
    expect(result.delivered).toBe(false);
    expect(result.error?.message).toContain('HTTP 401: mismatch');
  });
});
