import {
  type AlertEvent,
  type FleetcronEvent,
  openAlert,
  resolveAlert,
  subscribe,
} from '@fleetcron/core';
import { afterEach } from 'vitest';

const OPENED_AT = Date.UTC(2026, 0, 1, 4);

/** An opened `run_failed` alert for job `billing`. */
export const opened: AlertEvent = {
  action: 'opened',
  alert: openAlert(
    {
      kind: 'run_failed',
      severity: 'critical',
      job: 'billing',
      fireAt: Date.UTC(2026, 0, 1, 3),
      summary: 'billing failed after 3 attempts <retry>',
      details: { attempts: 3, error: 'connection refused' },
    },
    OPENED_AT,
  ),
};

/** The same alert, resolved ten minutes later. */
export const resolved: AlertEvent = {
  action: 'resolved',
  alert: resolveAlert(opened.alert, OPENED_AT + 600_000),
};

/** `alert.delivery_failed` events published during the current test. */
export const deliveryFailures: Array<Extract<FleetcronEvent, { type: 'alert.delivery_failed' }>> =
  [];
const unsubscribe = subscribe((event) => {
  if (event.type === 'alert.delivery_failed') deliveryFailures.push(event);
});
afterEach(() => {
  deliveryFailures.length = 0;
});
process.once('exit', unsubscribe);

/** Closers run after each test. */
export const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});
