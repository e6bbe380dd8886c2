import { readFileSync } from 'node:fs';
import { openAlert } from '@fleetcron/core';
import { startSmtpReceiver } from '@fleetcron/testkit';
import { describe, expect, it } from 'vitest';
import { emailAlerts } from '../examples/email-alerts.js';

describe('the README example (examples/email-alerts.ts)', () => {
  it('is quoted in the README as it is', () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    const example = readFileSync(new URL('../examples/email-alerts.ts', import.meta.url), 'utf8');
    expect(readme).toContain(example.slice(example.indexOf('import ')).trim());
  });

  it('sends an alert e-mail to a real SMTP server', async () => {
    const smtp = await startSmtpReceiver();
    try {
      const alert = openAlert(
        { kind: 'run_failed', severity: 'critical', job: 'billing', summary: 'billing failed' },
        Date.now(),
      );
      const result = await emailAlerts({ host: smtp.host, port: smtp.port }).deliver({
        action: 'opened',
        alert,
      });
      expect(result.delivered).toBe(true);
      const [mail] = await smtp.waitForMails(1);
      expect(mail?.to).toEqual(['ops@example.com']);
      expect(mail?.subject).toBe('[fleetcron] FIRING critical run_failed billing: billing failed');
      expect(mail?.text).toContain(`https://ops.example.com/fleet#/alerts/${alert.id}`);
    } finally {
      await smtp.close();
    }
  });
});
