import { FakeClock } from '@fleetcron/core';
import { describe, expect, it } from 'vitest';
import { openBackend } from '../src/backends.js';
import { runFleetDemo, summaryLine } from '../src/fleet-demo.js';
import { runProcessFleet } from '../src/process-fleet.js';

describe('fleet demo', () => {
  it('counts every fire in the span exactly once (fake clock, 60 s)', async () => {
    const fake = new FakeClock(Date.UTC(2026, 0, 1, 0, 0, 0, 500));
    const backend = await openBackend('memory', { clock: fake });
    const lines: string[] = [];
    const done = runFleetDemo({
      backend,
      backendName: 'memory',
      seconds: 60,
      clock: fake,
      // stamped with the fake clock: the backend's (and the real) time at each line
      print: (line) => lines.push(`${fake.now()} ${line}`),
    });
    await fake.advance(70_000);
    const result = await done;
    await backend.close();
    // span (00:00:00.5, 00:00:59.5]: fires at 2, 4, ..., 58 s
    expect(summaryLine(result)).toMatch(
      /^fires 29 inside the observed span \((29|3\d) ran in all\), runs 29, duplicates 0, missed 0$/,
    );
    expect(result.ranInAll).toBeGreaterThanOrEqual(result.fires);
    // the fleet runs on the backend's clock (issue 12): the instance whose clock is 3 s fast no
    // longer runs fires early; each run starts at or after its time by the backend's clock
    const fires = lines.filter((l) => / fire /.test(l));
    expect(fires.length).toBeGreaterThanOrEqual(29);
    for (const line of fires) {
      const [, stamp, due] = /^(\d+) fire (\S+) /.exec(line) ?? [];
      const dueMs = Date.parse(`2026-01-01T${due}Z`);
      expect(Number(stamp) - dueMs, line).toBeGreaterThanOrEqual(0);
    }
  });

  it('default (sqlite): three real OS processes on one file, every fire in the span once', async () => {
    const lines: string[] = [];
    const result = await runProcessFleet({
      seconds: 7,
      everyMs: 1000,
      print: (l) => lines.push(l),
    });
    const summary = summaryLine(result);
    expect(summary, lines.join('\n')).toMatch(
      /^fires \d+ inside the observed span \(\d+ ran in all\), runs \d+, duplicates 0, missed 0$/,
    );
    expect(
      result.fires,
      'a 7 s run at one fire a second sees at least 4 fires',
    ).toBeGreaterThanOrEqual(4);
    expect(result.runs).toBe(result.fires - result.skipped);
    const pids = new Set(lines.flatMap((l) => /\(pid (\d+)\)/.exec(l)?.slice(1) ?? []));
    expect(pids.size, 'runs happened in more than one OS process').toBeGreaterThan(1);
    expect(pids.has(String(process.pid)), 'never in the test process itself').toBe(false);
  }, 60_000);

  it('rejects an unknown backend name with the list of known ones', async () => {
    const fake = new FakeClock();
    await expect(openBackend('nope', { clock: fake })).rejects.toThrow(/unknown backend.*memory/);
  });
});
