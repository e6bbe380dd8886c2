import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { waitFor } from '@fleetcron/testkit';
import { afterAll, describe, expect, it } from 'vitest';

// End to end: a real Prometheus scrapes the Prometheus example (src/prometheus.ts, whose
// `broken-export` job always fails) and evaluates the exporter's shipped alert rules; then the
// example is killed and the no-live-instance rule sees it go.

const EXAMPLES = fileURLToPath(new URL('../', import.meta.url));
const RULES = fileURLToPath(
  new URL('../../packages/exporter-otel/alerts/fleetcron.rules.yml', import.meta.url),
);
const SETPRIV = ['/usr/bin/setpriv', '/bin/setpriv'].find((file) => existsSync(file));

function prometheusBinary(): string {
  const dirs = [...(process.env.PATH ?? '').split(delimiter), '/usr/bin', '/usr/local/bin'];
  for (const dir of dirs) {
    if (dir && existsSync(join(dir, 'prometheus'))) return join(dir, 'prometheus');
  }
  throw new Error(
    'prometheus not found: install it with `apt-get install -y prometheus` (Debian/Ubuntu) or put a Prometheus release on PATH',
  );
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** Spawns `command` so that it dies with this process (pdeathsig), keeping its output for errors. */
function start(
  command: string,
  args: string[],
  cwd?: string,
): { child: ChildProcess; output: () => string } {
  const [file, argv] = SETPRIV
    ? [SETPRIV, ['--pdeathsig', 'SIGKILL', '--', command, ...args]]
    : [command, args];
  const child = spawn(file, argv, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  const keep = (chunk: Buffer) => {
    text = (text + chunk.toString()).slice(-20_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  return { child, output: () => text };
}

async function stop(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

const work = mkdtempSync(join(tmpdir(), 'fleetcron-prometheus-'));
const children: ChildProcess[] = [];
afterAll(async () => {
  for (const child of children) await stop(child);
  rmSync(work, { recursive: true, force: true });
});

interface Alert {
  labels: Record<string, string>;
  state: 'pending' | 'firing';
}

describe('the exporter alert rules on a real Prometheus scraping the example', () => {
  it('fires FleetcronJobFailed for the failing job only, and sees the instance go', async () => {
    const prometheus = prometheusBinary();
    const examplePort = await freePort();
    const example = start(
      process.execPath,
      [
        '--import',
        'tsx',
        '--conditions=source',
        'src/prometheus.ts',
        '--port',
        String(examplePort),
      ],
      EXAMPLES,
    );
    children.push(example.child);
    await waitFor(() => example.output().includes('fleetcron metrics at'), {
      timeoutMs: 30_000,
      message: () => `the example to serve metrics (output: ${example.output()})`,
    });

    const promPort = await freePort();
    writeFileSync(
      join(work, 'prometheus.yml'),
      JSON.stringify({
        global: { scrape_interval: '1s', evaluation_interval: '1s' },
        rule_files: [RULES],
        scrape_configs: [
          { job_name: 'fleetcron', static_configs: [{ targets: [`127.0.0.1:${examplePort}`] }] },
        ],
      }),
    );
    const server = start(prometheus, [
      `--config.file=${join(work, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(work, 'data')}`,
      `--web.listen-address=127.0.0.1:${promPort}`,
    ]);
    children.push(server.child);
    const api = async <T>(path: string): Promise<T> => {
      const response = await fetch(`http://127.0.0.1:${promPort}/api/v1/${path}`);
      const body = (await response.json()) as { status: string; data: T };
      if (body.status !== 'success') throw new Error(`${path}: ${JSON.stringify(body)}`);
      return body.data;
    };
    const alerts = async () => (await api<{ alerts: Alert[] }>('alerts')).alerts;

    // the rules load and evaluate without error against the scraped series
    const rules = await waitFor(
      async () => {
        const { groups } = await api<{
          groups: Array<{ rules: Array<{ name: string; health: string; lastError?: string }> }>;
        }>('rules');
        const all = groups.flatMap((g) => g.rules);
        return all.length === 10 && all.every((r) => r.health === 'ok') && all;
      },
      {
        timeoutMs: 30_000,
        message: () => `10 healthy rules (prometheus: ${server.output().slice(-2000)})`,
      },
    );
    expect(rules.map((r) => r.lastError ?? '')).toEqual(rules.map(() => ''));

    const failed = await waitFor(
      async () => {
        const firing = (await alerts()).filter(
          (a) => a.labels.alertname === 'FleetcronJobFailed' && a.state === 'firing',
        );
        return firing.length > 0 && firing;
      },
      { timeoutMs: 45_000, intervalMs: 250, message: 'FleetcronJobFailed firing' },
    );
    expect(failed.map((a) => a.labels.fleetcron_job)).toEqual(['broken-export']);
    expect(failed[0]?.labels.severity).toBe('critical');
    // the example's other jobs succeed (flaky-import after its retry): nothing else is failing
    const others = (await alerts()).filter((a) =>
      ['FleetcronJobOverdue', 'FleetcronNoLiveInstance', 'FleetcronClockOffset'].includes(
        a.labels.alertname ?? '',
      ),
    );
    expect(others).toEqual([]);

    // the only instance dies: no live instance (pending: the rule waits 2 min before firing)
    await stop(example.child);
    await waitFor(
      async () =>
        (await alerts()).some(
          (a) => a.labels.alertname === 'FleetcronNoLiveInstance' && a.state === 'pending',
        ),
      { timeoutMs: 30_000, intervalMs: 250, message: 'FleetcronNoLiveInstance pending' },
    );
  }, 120_000);
});
