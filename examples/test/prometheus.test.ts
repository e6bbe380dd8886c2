import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const script = fileURLToPath(new URL('../src/prometheus.ts', import.meta.url));
const tsx = fileURLToPath(new URL('../../node_modules/.bin/tsx', import.meta.url));

describe('prometheus example', () => {
  it('serves fleetcron metrics in the Prometheus text format (--once)', async () => {
    const { stdout } = await run(tsx, ['--conditions=source', script, '--once'], {
      timeout: 60_000,
    });
    const runs = stdout.split('\n').filter((line) => line.startsWith('fleetcron_runs_total{'));
    expect(runs.length).toBeGreaterThan(0);
    expect(stdout).toMatch(/fleetcron_run_duration_bucket\{/);
    expect(stdout).toMatch(/fleetcron_fire_skipped_total\{[^}]*fleetcron_skip_reason="overlap"/);
  }, 90_000);
});
