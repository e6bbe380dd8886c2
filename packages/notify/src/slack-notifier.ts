import type { AlertEvent, AlertSeverity, Notifier } from '@fleetcron/core';
import { InvalidOptionError } from '@fleetcron/core';
import { alertSubject, alertText } from './alert-text.js';
import { type HttpNotifierOptions, parseHttpOptions } from './http-options.js';
import { postJson } from './post-json.js';

/** Options of {@link slackNotifier}. */
export interface SlackNotifierOptions extends HttpNotifierOptions {
  /** Channel override (`#ops`), where the incoming webhook allows one. */
  channel?: string;
  /** Sender name override. */
  username?: string;
  /** Sender icon, e.g. `:rotating_light:`. */
  iconEmoji?: string;
}

/** Attachment colour per severity; resolved alerts are green. */
export const SLACK_COLORS: Readonly<Record<AlertSeverity | 'resolved', string>> = {
  critical: '#d00000',
  warning: '#f2a900',
  info: '#439fe0',
  resolved: '#2eb886',
};

/** Escapes the three characters Slack's message format reserves. */
function escapeSlack(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** The incoming-webhook message for `event`: a `text` line and one coloured attachment. */
export function slackMessage(
  event: AlertEvent,
  options: Pick<SlackNotifierOptions, 'channel' | 'username' | 'iconEmoji' | 'link'> = {},
): Record<string, unknown> {
  const { alert } = event;
  const link = options.link?.(alert);
  const attachment: Record<string, unknown> = {
    color: event.action === 'resolved' ? SLACK_COLORS.resolved : SLACK_COLORS[alert.severity],
    title: escapeSlack(alert.summary),
    text: `\`\`\`${escapeSlack(alertText(event))}\`\`\``,
    footer: 'fleetcron',
    ts: Math.floor((alert.resolvedAt ?? alert.openedAt) / 1000),
  };
  if (link) attachment.title_link = link;
  const message: Record<string, unknown> = {
    text: escapeSlack(alertSubject(event)),
    attachments: [attachment],
  };
  if (options.channel) message.channel = options.channel;
  if (options.username) message.username = options.username;
  if (options.iconEmoji) message.icon_emoji = options.iconEmoji;
  return message;
}

/**
 * A {@link Notifier} that posts each event to a Slack-style incoming webhook (Slack, Mattermost,
 * Rocket.Chat accept this format): a one-line `text` and a coloured attachment with the details.
 * The URL is the secret: it never appears in errors.
 *
 * @throws InvalidOptionError (fields `slack.*`) for bad options.
 */
export function slackNotifier(options: SlackNotifierOptions): Notifier {
  const { url, name, timeoutMs, headers, link } = parseHttpOptions('slack', options);
  for (const field of ['channel', 'username', 'iconEmoji'] as const) {
    const value = options[field];
    if (value !== undefined && (typeof value !== 'string' || value.length === 0)) {
      throw new InvalidOptionError(`slack.${field}`, 'must be a non-empty string or left out.');
    }
  }
  const shape = { ...options, link };
  return {
    name,
    async notify(event, { signal }) {
      const body = JSON.stringify(slackMessage(event, shape));
      await postJson(name, url, body, headers, signal, timeoutMs);
    },
  };
}
