import { execFile } from 'node:child_process';
import { channel } from 'node:diagnostics_channel';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { EVENTS_CHANNEL, type FleetcronEvent } from '@fleetcron/core';
import { PrometheusExporter, PrometheusSerializer } from '@opentelemetry/exporter-prometheus';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { afterAll, describe, expect, it } from 'vitest';
import { fleetcronOpenTelemetry } from '../src/index.js';

// The alert rules and the dashboard shipped with the package, checked by Prometheus's own tools:
// `promtool check rules`, `promtool test rules` (test/alerts/*.test.yml), and every expression of
// the dashboard parsed by promtool too; every fleetcron_* name they use is one the exporter emits.

const run = promisify(execFile);
const PACKAGE = fileURLToPath(new URL('../', import.meta.url));
const RULES = join(PACKAGE, 'alerts/fleetcron.rules.yml');
const DASHBOARD = join(PACKAGE, 'dashboards/fleetcron.json');
const RULE_TESTS = join(PACKAGE, 'test/alerts/fleetcron.rules.test.yml');

/** promtool from PATH or Debian's location; a missing one fails the test with how to get it. */
function promtool(): string {
  const dirs = [...(process.env.PATH ?? '').split(delimiter), '/usr/bin', '/usr/local/bin'];
  for (const dir of dirs) {
    const file = join(dir, 'promtool');
    if (dir && existsSync(file)) return file;
  }
  throw new Error(
    'promtool not found: install it with `apt-get install -y prometheus` (Debian/Ubuntu) or put the promtool of a Prometheus release on PATH',
  );
}

async function promtoolOk(args: string[]): Promise<string> {
  try {
    const { stdout, stderr } = await run(promtool(), args, { timeout: 60_000 });
    return stdout + stderr;
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    throw new Error(`promtool ${args.join(' ')} failed:\n${stdout}${stderr}`);
  }
}

const work = mkdtempSync(join(tmpdir(), 'fleetcron-rules-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

interface Dashboard {
  panels: Array<{ title: string; targets: Array<{ expr: string }> }>;
}
const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as Dashboard;
const rulesText = readFileSync(RULES, 'utf8');

/** Metric and label names the exporter really exposes through @opentelemetry/exporter-prometheus. */
async function exposedNames(): Promise<Set<string>> {
  const exporter = new PrometheusExporter({ preventServerStart: true });
  const meterProvider = new MeterProvider({ readers: [exporter] });
  const otel = fleetcronOpenTelemetry({ meterProvider });
  const base = { instanceId: 'i-1', job: 'j', fireAt: 1000, at: 2000 };
  const events: FleetcronEvent[] = [
    { type: 'fire.scheduled', ...base },
    { type: 'claim.won', ...base, backend: 'memory', token: 1, latencyMs: 1 },
    { type: 'claim.lost', ...base, backend: 'memory', reason: 'claimed', latencyMs: 1 },
    { type: 'run.started', ...base, token: 1, lagMs: 5 },
    { type: 'lease.lost', ...base, token: 1, error: null },
    {
      type: 'run.finished',
      ...base,
      token: 1,
      status: 'succeeded',
      attempt: 1,
      durationMs: 3,
      error: null,
    },
    { type: 'clock.offset', ...base, backend: 'memory', offsetMs: 3, rttMs: 1, boundMs: 1 },
    { type: 'leader.changed', instanceId: 'i-1', at: 1, election: 'e', isLeader: true, term: 1 },
    {
      ...{ type: 'alert.delivery_failed', instanceId: 'i-1', at: 1, notifier: 'webhook' },
      ...{ alertId: 'a', alertKey: 'k', action: 'opened', attempt: 1, retryInMs: null },
      error: new Error('x'),
    },
  ];
  for (const event of events) channel(EVENTS_CHANNEL).publish(event);
  const { resourceMetrics } = await exporter.collect();
  const text = new PrometheusSerializer().serialize(resourceMetrics);
  otel.shutdown();
  await meterProvider.shutdown();
  const names = new Set<string>();
  for (const line of text.split('\n')) {
    if (line.startsWith('#') || !line.startsWith('fleetcron')) continue;
    const end = line.search(/[{ ]/);
    names.add(line.slice(0, end));
    for (const match of line.slice(end).matchAll(/([a-z_]+)="/g)) names.add(match[1] as string);
  }
  return names;
}

describe('alerts/fleetcron.rules.yml', () => {
  it('passes promtool check rules', async () => {
    expect(await promtoolOk(['check', 'rules', RULES])).toContain('SUCCESS: 10 rules found');
  });

  it('passes its promtool unit tests (test/alerts/fleetcron.rules.test.yml)', async () => {
    expect(await promtoolOk(['test', 'rules', RULE_TESTS])).toContain('SUCCESS');
  });

  it('has a rule for every condition the package promises', () => {
    const alerts = [...rulesText.matchAll(/- alert: (\w+)/g)].map((m) => m[1]);
    expect(alerts).toEqual([
      'FleetcronNoLiveInstance',
      'FleetcronJobFailed',
      'FleetcronJobOverdue',
      'FleetcronFiresMissed',
      'FleetcronFireLagHigh',
      'FleetcronClockOffset',
      'FleetcronLeaseLost',
      'FleetcronStoreErrors',
      'FleetcronLockBackendFailing',
      'FleetcronAlertDeliveryFailing',
    ]);
  });
});

describe('dashboards/fleetcron.json', () => {
  it('has panels, each with at least one query', () => {
    expect(dashboard.panels.length).toBeGreaterThan(10);
    for (const panel of dashboard.panels)
      expect(panel.targets.length, panel.title).toBeGreaterThan(0);
  });

  it('every query parses as PromQL (checked by promtool as recording rules)', async () => {
    const rules = dashboard.panels.flatMap((panel) =>
      panel.targets.map((target, i) => ({
        record: `dashboard:${panel.title.replace(/[^A-Za-z0-9]+/g, '_')}:${i}`,
        // Grafana's variables, as Grafana would substitute them
        expr: target.expr.replaceAll('$__rate_interval', '5m').replaceAll('$job', '.*'),
      })),
    );
    const file = join(work, 'dashboard.rules.yml');
    writeFileSync(file, JSON.stringify({ groups: [{ name: 'dashboard', rules }] }));
    expect(await promtoolOk(['check', 'rules', file])).toContain(
      `SUCCESS: ${rules.length} rules found`,
    );
  });
});

describe('the names the rules and the dashboard use', () => {
  it('are metric or label names the exporter exposes', async () => {
    const exposed = await exposedNames();
    expect(exposed).toContain('fleetcron_runs_total');
    expect(exposed).toContain('fleetcron_fire_lag_bucket');
    const used = new Set(
      [rulesText, ...dashboard.panels.flatMap((p) => p.targets.map((t) => t.expr))].flatMap(
        (text) => [...text.matchAll(/\bfleetcron_[a-z_]+\b/g)].map((m) => m[0]),
      ),
    );
    expect(used.size).toBeGreaterThan(15);
    expect([...used].filter((name) => !exposed.has(name))).toEqual([]);
  });
});
