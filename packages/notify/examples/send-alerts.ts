// Two notifiers behind deliveries (quoted in the README; run by test/verify-example.test.ts).
import { type AlertEvent, createAlertDelivery, openAlert } from '@fleetcron/core';
import { slackNotifier, webhookNotifier } from '@fleetcron/notify';

export async function sendAlert(config: { webhookUrl: string; secret: string; slackUrl: string }) {
  const webhook = createAlertDelivery(
    webhookNotifier({
      url: config.webhookUrl,
      secret: config.secret, // at least 16 characters
      link: (alert) => `https://ops.example.com/fleet#/alerts/${alert.id}`,
    }),
    { attempts: 5, timeoutMs: 10_000, onError: (error) => console.error('not delivered', error) },
  );
  const slack = createAlertDelivery(slackNotifier({ url: config.slackUrl }));

  const alert = openAlert(
    { kind: 'run_failed', severity: 'critical', job: 'billing', summary: 'billing failed' },
    Date.now(),
  );
  const event: AlertEvent = { action: 'opened', alert };
  // deliver() never rejects: each resolves { delivered, attempts, error }
  return Promise.all([webhook.deliver(event), slack.deliver(event)]);
}
