import {
  type AlertEvent,
  createAlertDelivery,
  type FleetcronEvent,
  isFleetcronError,
  openAlert,
  realClock,
  resolveAlert,
  subscribe,
} from '@fleetcron/core';
import { type SmtpReceiver, startSmtpReceiver } from '@fleetcron/testkit';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { emailNotifier } from '../src/email-notifier.js';

const opened: AlertEvent = {
  action: 'opened',
  alert: openAlert(
    {
      kind: 'job_overdue',
      severity: 'critical',
      job: 'export',
      summary: 'export has not succeeded since 03:00 (grace 1 h)',
      details: { expectedBy: '2026-01-01T04:00:00.000Z', lastSuccess: null },
    },
    Date.UTC(2026, 0, 1, 4),
  ),
};
const resolved: AlertEvent = {
  action: 'resolved',
  alert: resolveAlert(opened.alert, Date.UTC(2026, 0, 1, 4, 20)),
};

const fast = { clock: realClock, jitter: 'none', backoff: { initialMs: 20 } } as const;

let smtp: SmtpReceiver;
beforeAll(async () => {
  smtp = await startSmtpReceiver();
});
afterAll(async () => {
  await smtp?.close();
});

const failures: Array<Extract<FleetcronEvent, { type: 'alert.delivery_failed' }>> = [];
const unsubscribe = subscribe((e) => {
  if (e.type === 'alert.delivery_failed') failures.push(e);
});
afterAll(unsubscribe);
afterEach(() => {
  failures.length = 0;
});

describe('emailNotifier', () => {
  it('sends the alert to the SMTP server: envelope, subject and body as written', async () => {
    const before = smtp.mails.length;
    const notifier = emailNotifier({
      transport: { host: smtp.host, port: smtp.port, secure: false },
      from: 'fleetcron <alerts@example.test>',
      to: ['ops@example.test', 'oncall@example.test'],
      link: (alert) => `https://ops.example/fleet#/alerts/${alert.id}`,
    });
    const delivery = createAlertDelivery(notifier, fast);
    expect(await delivery.deliver(opened)).toEqual({ delivered: true, attempts: 1, error: null });
    expect(await delivery.deliver(resolved)).toMatchObject({ delivered: true });
    const mails = (await smtp.waitForMails(before + 2)).slice(before);
    expect(mails.map((m) => [m.from, m.to, m.subject])).toEqual([
      [
        'alerts@example.test',
        ['ops@example.test', 'oncall@example.test'],
        '[fleetcron] FIRING critical job_overdue export: export has not succeeded since 03:00 (grace 1 h)',
      ],
      [
        'alerts@example.test',
        ['ops@example.test', 'oncall@example.test'],
        '[fleetcron] RESOLVED job_overdue export: export has not succeeded since 03:00 (grace 1 h)',
      ],
    ]);
    const body = mails[0]?.text ?? '';
    expect(body).toContain('job:      export');
    expect(body).toContain('  expectedBy: 2026-01-01T04:00:00.000Z');
    expect(body).toContain(`https://ops.example/fleet#/alerts/${opened.alert.id}`);
    expect(mails[0]?.headers['x-fleetcron-alert']).toBe(opened.alert.id);
    expect(mails[1]?.text).toContain('resolved: 2026-01-01T04:20:00.000Z');
  });

  it('retries after the server refuses with 451 (temporary), then is delivered', async () => {
    const before = smtp.mails.length;
    await smtp.failNext(2, 451);
    const notifier = emailNotifier({
      transport: `smtp://${smtp.host}:${smtp.port}`,
      from: 'alerts@example.test',
      to: 'ops@example.test',
      subject: (event) => `custom ${event.alert.id}`,
    });
    const result = await createAlertDelivery(notifier, fast).deliver(opened);
    expect(result).toEqual({ delivered: true, attempts: 3, error: null });
    expect(smtp.refused.slice(-2)).toEqual([451, 451]);
    const mails = (await smtp.waitForMails(before + 1)).slice(before);
    expect(mails.map((m) => m.subject)).toEqual([`custom ${opened.alert.id}`]);
    expect(failures.map((f) => [f.attempt, f.error.message])).toEqual([
      [1, expect.stringContaining('SMTP 451')],
      [2, expect.stringContaining('SMTP 451')],
    ]);
  });

  it('does not retry a permanent 550 refusal', async () => {
    await smtp.failNext(1, 550);
    const notifier = emailNotifier({
      transport: { host: smtp.host, port: smtp.port },
      from: 'alerts@example.test',
      to: 'ops@example.test',
    });
    const result = await createAlertDelivery(notifier, fast).deliver(opened);
    expect(result).toMatchObject({ delivered: false, attempts: 1 });
    expect(result.error).toMatchObject({ code: 'NOTIFY_FAILED', status: 550, retryable: false });
  });

  it('a server that hangs is bounded by the delivery timeout; the next attempt gets through', async () => {
    const before = smtp.mails.length;
    await smtp.hangNext(1);
    const notifier = emailNotifier({
      transport: { host: smtp.host, port: smtp.port },
      from: 'alerts@example.test',
      to: 'ops@example.test',
      timeoutMs: 2500,
    });
    const result = await createAlertDelivery(notifier, { ...fast, timeoutMs: 2500 }).deliver(
      resolved,
    );
    expect(result).toEqual({ delivered: true, attempts: 2, error: null });
    expect(isFleetcronError(failures[0]?.error, 'NOTIFY_TIMEOUT')).toBe(true);
    expect((await smtp.waitForMails(before + 1)).length).toBe(before + 1);
  });

  it.each<[string, object, string]>([
    ['no transport', { from: 'a@x.test', to: 'b@x.test' }, 'email.transport'],
    ['no from', { transport: { host: 'x' }, to: 'b@x.test' }, 'email.from'],
    ['an empty recipient list', { transport: { host: 'x' }, from: 'a@x.test', to: [] }, 'email.to'],
    [
      'a zero timeout',
      { transport: { host: 'x' }, from: 'a', to: 'b', timeoutMs: 0 },
      'email.timeoutMs',
    ],
    [
      'a subject that is not a function',
      { transport: {}, from: 'a', to: 'b', subject: 's' },
      'email.subject',
    ],
  ])('refuses %s, naming the field', (_label, options, field) => {
    let error: unknown;
    try {
      emailNotifier(options as never);
    } catch (e) {
      error = e;
    }
    expect(isFleetcronError(error, 'INVALID_OPTION')).toBe(true);
    expect((error as { field: string }).field).toBe(field);
  });
});
