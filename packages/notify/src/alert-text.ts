import type { Alert, AlertEvent } from '@fleetcron/core';

/** Builds a link to an alert (the console, a runbook), or `undefined` for none. */
export type AlertLink = (alert: Alert) => string | undefined;

/** ISO 8601 UTC of epoch ms. */
const iso = (ms: number) => new Date(ms).toISOString();

/**
 * One line naming the event, for an e-mail subject or a chat message's first line:
 * `[fleetcron] FIRING critical run_failed billing: billing failed after 3 attempts`, or
 * `[fleetcron] RESOLVED run_failed billing: ...`.
 */
export function alertSubject(event: AlertEvent): string {
  const { alert } = event;
  const state = event.action === 'opened' ? `FIRING ${alert.severity}` : 'RESOLVED';
  const job = alert.job === null ? '' : ` ${alert.job}`;
  return `[fleetcron] ${state} ${alert.kind}${job}: ${alert.summary}`.replace(/[\r\n]+/g, ' ');
}

/**
 * The event as plain text lines: summary, kind and severity, job and fire time, when it opened
 * (and resolved), the alert's id and key, each detail, and the link when `link` gives one.
 */
export function alertText(event: AlertEvent, link?: AlertLink): string {
  const { alert } = event;
  const lines = [
    alert.summary,
    '',
    `state:    ${alert.state}`,
    `kind:     ${alert.kind}`,
    `severity: ${alert.severity}`,
  ];
  if (alert.job !== null) lines.push(`job:      ${alert.job}`);
  if (alert.fireAt !== null) lines.push(`fire:     ${iso(alert.fireAt)}`);
  lines.push(`opened:   ${iso(alert.openedAt)}`);
  if (alert.resolvedAt !== null) lines.push(`resolved: ${iso(alert.resolvedAt)}`);
  lines.push(`id:       ${alert.id}`, `key:      ${alert.key}`);
  const details = Object.entries(alert.details);
  if (details.length > 0) {
    lines.push('', 'details:');
    for (const [name, value] of details) {
      lines.push(`  ${name}: ${typeof value === 'string' ? value : JSON.stringify(value)}`);
    }
  }
  const url = link?.(alert);
  if (url) lines.push('', url);
  return lines.join('\n');
}
