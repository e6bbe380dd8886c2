import { createAlertDelivery, isFleetcronError, realClock } from '@fleetcron/core';
import { startHttpReceiver } from '@fleetcron/testkit';
import { describe, expect, it } from 'vitest';
import { alertSubject, alertText } from '../src/alert-text.js';
import { SLACK_COLORS, slackMessage, slackNotifier } from '../src/slack-notifier.js';
import { closers, opened, resolved } from './helpers.js';

const fast = { clock: realClock, jitter: 'none', backoff: { initialMs: 20 } } as const;

describe('slackNotifier', () => {
  it('posts the incoming-webhook format: a text line and a coloured attachment', async () => {
    const receiver = await startHttpReceiver();
    closers.push(() => receiver.close());
    const notifier = slackNotifier({
      url: `${receiver.url}/services/T000/B000/XXXX`,
      channel: '#ops',
      iconEmoji: ':rotating_light:',
      link: (alert) => `https://ops.example/fleet#/alerts/${alert.id}`,
    });
    const delivery = createAlertDelivery(notifier, fast);
    expect((await delivery.deliver(opened)).delivered).toBe(true);
    expect((await delivery.deliver(resolved)).delivered).toBe(true);
    const [first, second] = receiver.requests.map((r) => JSON.parse(r.body));
    expect(first).toEqual({
      text: '[fleetcron] FIRING critical run_failed billing: billing failed after 3 attempts &lt;retry&gt;',
      channel: '#ops',
      icon_emoji: ':rotating_light:',
      attachments: [
        {
          color: SLACK_COLORS.critical,
          title: 'billing failed after 3 attempts &lt;retry&gt;',
          title_link: `https://ops.example/fleet#/alerts/${opened.alert.id}`,
          text: expect.stringContaining('job:      billing'),
          footer: 'fleetcron',
          ts: opened.alert.openedAt / 1000,
        },
      ],
    });
    expect(second.text).toMatch(/^\[fleetcron\] RESOLVED run_failed billing/);
    expect(second.attachments[0].color).toBe(SLACK_COLORS.resolved);
  });

  it('keeps the URL (its secret) out of errors on a 404', async () => {
    const receiver = await startHttpReceiver({
      respond: () => ({ status: 404, body: 'no_service' }),
    });
    closers.push(() => receiver.close());
    const notifier = slackNotifier({ url: `${receiver.url}/services/T000/B000/SECRETSECRET` });
    const result = await createAlertDelivery(notifier, fast).deliver(opened);
    expect(result).toMatchObject({ delivered: false, attempts: 1 });
    expect(result.error?.message).toContain('HTTP 404: no_service');
    expect(result.error?.message).not.toContain('SECRETSECRET');
  });

  it('refuses an empty channel', () => {
    let error: unknown;
    try {
      slackNotifier({ url: 'https://hooks.example/x', channel: '' });
    } catch (e) {
      error = e;
    }
    expect(isFleetcronError(error, 'INVALID_OPTION')).toBe(true);
    expect((error as { field: string }).field).toBe('slack.channel');
  });
});

describe('alert text', () => {
  it('names state, severity, kind and job in the subject, on one line', () => {
    expect(alertSubject(opened)).toBe(
      '[fleetcron] FIRING critical run_failed billing: billing failed after 3 attempts <retry>',
    );
    expect(alertSubject(resolved)).toMatch(/^\[fleetcron\] RESOLVED run_failed billing: /);
  });

  it('lists the fields, the details and the link in the body', () => {
    const text = alertText(resolved, (alert) => `https://ops.example/#/alerts/${alert.id}`);
    expect(text.split('\n')).toEqual([
      'billing failed after 3 attempts <retry>',
      '',
      'state:    resolved',
      'kind:     run_failed',
      'severity: critical',
      'job:      billing',
      'fire:     2026-01-01T03:00:00.000Z',
      'opened:   2026-01-01T04:00:00.000Z',
      'resolved: 2026-01-01T04:10:00.000Z',
      `id:       ${opened.alert.id}`,
      `key:      ${opened.alert.key}`,
      '',
      'details:',
      '  attempts: 3',
      '  error: connection refused',
      '',
      `https://ops.example/#/alerts/${opened.alert.id}`,
    ]);
    expect(slackMessage(opened).attachments).toHaveLength(1);
  });
});
