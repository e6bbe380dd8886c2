import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { createAlertDelivery, realClock } from '@fleetcron/core';
import { startHttpReceiver } from '@fleetcron/testkit';
import { describe, expect, it } from 'vitest';
import { sendAlert } from '../examples/send-alerts.js';
import { alertReceiver } from '../examples/verify-webhook.js';
import { verifyWebhookSignature } from '../src/signature.js';
import type { WebhookBody } from '../src/webhook-notifier.js';
import { webhookNotifier } from '../src/webhook-notifier.js';
import { closers, opened } from './helpers.js';

const SECRET = 'a-shared-secret-of-32-characters';

describe('the README examples (examples/*.ts)', () => {
  it.each(['verify-webhook.ts', 'send-alerts.ts'])(
    '%s is quoted in the README as it is',
    (file) => {
      const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
      const example = readFileSync(new URL(`../examples/${file}`, import.meta.url), 'utf8');
      const code = example.slice(example.indexOf('import '));
      expect(readme).toContain(code.trim());
    },
  );

  it('send-alerts.ts delivers to a webhook and a Slack-style receiver', async () => {
    const receiver = await startHttpReceiver();
    closers.push(() => receiver.close());
    const results = await sendAlert({
      webhookUrl: `${receiver.url}/hook`,
      secret: SECRET,
      slackUrl: `${receiver.url}/slack`,
    });
    expect(results.map((r) => r.delivered)).toEqual([true, true]);
    expect(receiver.requests.map((r) => r.path).sort()).toEqual(['/hook', '/slack']);
    const hook = receiver.requests.find((r) => r.path === '/hook');
    const check = verifyWebhookSignature({
      body: hook?.body ?? '',
      header: hook?.headers['x-fleetcron-signature'],
      secret: SECRET,
    });
    expect(check.valid).toBe(true);
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
