import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const CLUSTER = fileURLToPath(new URL('../src/cluster.ts', import.meta.url));

describe('node:cluster example', () => {
  it('three cluster workers on one SQLite file: every fire once, clean exit', async () => {
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        '--conditions=source',
        CLUSTER,
        '--workers',
        '3',
        '--seconds',
        '6',
        '--every',
        '1000',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
    });
    child.stderr.on('data', (c: Buffer) => {
      out += c.toString();
    });
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code, out).toBe(0);
    const summary =
      /fires (\d+) inside the observed span \((\d+) ran in all\), runs (\d+), duplicates 0, missed 0/.exec(
        out,
      );
    expect(summary, out).not.toBeNull();
    expect(Number(summary?.[1])).toBeGreaterThanOrEqual(3);
    const workers = new Set(out.match(/won by worker-\d+/g));
    expect(workers.size, 'more than one worker won fires').toBeGreaterThan(1);
  }, 60_000);
});
