import { describe, expect, it } from 'vitest';
import {
  ALERT_KINDS,
  type AlertInput,
  alertId,
  alertKey,
  openAlert,
  resolveAlert,
} from '../../src/alerts/alert.js';
import { isFleetcronError } from '../../src/errors.js';

const FIRE = Date.UTC(2026, 0, 1, 3);
const NOW = FIRE + 60_000;

const failed: AlertInput = {
  kind: 'run_failed',
  severity: 'critical',
  job: 'billing',
  fireAt: FIRE,
  summary: 'billing failed after 3 attempts',
  details: { attempts: 3, error: 'connection refused' },
};

describe('openAlert(input, now)', () => {
  it('builds an open alert with a stable key and an id for this opening', () => {
    const alert = openAlert(failed, NOW);
    expect(alert).toEqual({
      id: alertId(`run_failed:billing:${FIRE}`, NOW),
      key: `run_failed:billing:${FIRE}`,
      kind: 'run_failed',
      severity: 'critical',
      job: 'billing',
      fireAt: FIRE,
      state: 'open',
      openedAt: NOW,
      resolvedAt: null,
      summary: 'billing failed after 3 attempts',
      details: { attempts: 3, error: 'connection refused' },
    });
    expect(alert.id).toMatch(/^[0-9a-f]{16}$/);
    expect(Object.isFrozen(alert)).toBe(true);
  });

  it('gives the same condition the same key and each opening its own id', () => {
    const first = openAlert(failed, NOW);
    const again = openAlert({ ...failed, fireAt: new Date(FIRE) }, NOW + 1);
    expect(again.key).toBe(first.key);
    expect(again.id).not.toBe(first.id);
    expect(openAlert({ ...failed, fireAt: FIRE + 1 }, NOW).key).not.toBe(first.key);
  });

  it('keys fleet-wide conditions by kind alone, job conditions by kind and job', () => {
    expect(alertKey('no_live_instance')).toBe('no_live_instance');
    expect(alertKey('job_overdue', 'export')).toBe('job_overdue:export');
    const fleet = openAlert(
      { kind: 'no_live_instance', severity: 'critical', summary: 'no live instance' },
      NOW,
    );
    expect(fleet).toMatchObject({ key: 'no_live_instance', job: null, fireAt: null });
  });

  it('copies details, so later changes by the caller do not change the alert', () => {
    const details = { instances: ['a'] };
    const alert = openAlert({ ...failed, details }, NOW);
    details.instances.push('b');
    expect(alert.details).toEqual({ instances: ['a'] });
  });

  it.each<[string, Partial<AlertInput> & Record<string, unknown>, string]>([
    ['an unknown kind', { kind: 'boom' as never }, 'alert.kind'],
    ['an unknown severity', { severity: 'page' as never }, 'alert.severity'],
    ['an empty job', { job: '' }, 'alert.job'],
    ['an invalid fire time', { fireAt: new Date(Number.NaN) }, 'alert.fireAt'],
    ['an empty summary', { summary: '' }, 'alert.summary'],
    ['details with a BigInt', { details: { n: 1n } }, 'alert.details'],
    ['details that are an array', { details: [] as never }, 'alert.details'],
  ])('refuses %s, naming the field', (_label, change, field) => {
    let error: unknown;
    try {
      openAlert({ ...failed, ...change } as AlertInput, NOW);
    } catch (e) {
      error = e;
    }
    expect(isFleetcronError(error, 'INVALID_OPTION')).toBe(true);
    expect((error as { field: string }).field).toBe(field);
  });

  it('lists every kind once', () => {
    expect(new Set(ALERT_KINDS).size).toBe(ALERT_KINDS.length);
    expect(ALERT_KINDS).toContain('job_overdue');
  });
});

describe('resolveAlert(alert, now)', () => {
  it('resolves once, keeping id and key', () => {
    const open = openAlert(failed, NOW);
    const resolved = resolveAlert(open, NOW + 5000);
    expect(resolved).toMatchObject({
      id: open.id,
      key: open.key,
      state: 'resolved',
      resolvedAt: NOW + 5000,
    });
    expect(resolveAlert(resolved, NOW + 9000)).toBe(resolved);
    expect(open.state).toBe('open');
  });

  it('never resolves before it opened (a clock stepped back)', () => {
    expect(resolveAlert(openAlert(failed, NOW), NOW - 10).resolvedAt).toBe(NOW);
  });
});
