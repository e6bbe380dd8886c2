// An e-mail notifier behind a delivery (quoted in the README; run by test/example.test.ts).
import { createAlertDelivery } from '@fleetcron/core';
import { emailNotifier } from '@fleetcron/notify-email';

export function emailAlerts(smtp: { host: string; port: number; user?: string; pass?: string }) {
  return createAlertDelivery(
    emailNotifier({
      transport: {
        host: smtp.host,
        port: smtp.port,
        ...(smtp.user ? { auth: { user: smtp.user, pass: smtp.pass } } : {}),
      },
      from: 'fleetcron <alerts@example.com>',
      to: ['ops@example.com'],
      link: (alert) => `https://ops.example.com/fleet#/alerts/${alert.id}`,
    }),
    { attempts: 5, onError: (error) => console.error('alert e-mail not sent', error) },
  );
}
// const email = emailAlerts({ host: 'smtp.example.com', port: 587, user, pass });
// await email.deliver({ action: 'opened', alert }); // never rejects: { delivered, attempts, error }
