import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { groupMembers, type ProcEntry, stillRunning } from '../src/proc.js';
import { reapStale } from '../src/temp-dir.js';
import { waitFor } from '../src/wait.js';
import { existsSync } from './helpers.js';

interface Started {
  kind: string;
  pid: number;
  dir: string;
  processes: ProcEntry[];
}

const fixture = fileURLToPath(new URL('./fixtures/start-all.ts', import.meta.url));

/** Runs the fixture, returns what it started once it printed it, then SIGKILLs it. */
async function startAndKill(args: string[]): Promise<Started[]> {
  const child = spawn(process.execPath, ['--import', 'tsx', fixture, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    const line = await waitFor(
      () => {
        if (child.exitCode !== null) throw new Error(`fixture exited early: ${stderr}`);
        return stdout.includes('\n') ? stdout.slice(0, stdout.indexOf('\n')) : false;
      },
      { timeoutMs: 90_000, message: () => `fixture output (stderr: ${stderr.slice(-2000)})` },
    );
    return JSON.parse(line) as Started[];
  } finally {
    child.kill('SIGKILL');
    await exited;
  }
}

function leftovers(started: Started[]): ProcEntry[] {
  return started.flatMap((s) => [...groupMembers(s.pid), ...s.processes.filter(stillRunning)]);
}

describe('a test process killed with SIGKILL', () => {
  it('takes every server process with it; the reaper removes the temp dirs', async () => {
    const started = await startAndKill([]);
    expect(started.map((s) => s.kind)).toEqual(['postgres', 'redis', 'etcd']);
    expect(started[0]?.processes.length).toBeGreaterThan(3); // postmaster + children
    await waitFor(() => leftovers(started).length === 0, {
      timeoutMs: 30_000,
      message: () => `no server process left: ${JSON.stringify(leftovers(started))}`,
    });
    for (const s of started) expect(existsSync(s.dir)).toBe(true); // kill -9: nobody cleaned up
    const report = reapStale();
    expect(report.dirs).toEqual(expect.arrayContaining(started.map((s) => s.dir)));
    for (const s of started) expect(existsSync(s.dir)).toBe(false);
  }, 120_000);

  it('leaves no server running even when the servers were paused (reaper frees stopped ones)', async () => {
    const started = await startAndKill(['--pause']);
    // pdeathsig kills the postmaster, redis and etcd even while stopped; postgres children run in
    // sessions of their own and stay stopped until the reaper (run at every testkit start) kills them.
    await waitFor(() => started.every((s) => groupMembers(s.pid).length === 0), {
      timeoutMs: 30_000,
      message: 'server process groups gone',
    });
    reapStale();
    await waitFor(() => leftovers(started).length === 0, {
      timeoutMs: 30_000,
      message: () => `no server process left: ${JSON.stringify(leftovers(started))}`,
    });
    for (const s of started) expect(existsSync(s.dir)).toBe(false);
  }, 120_000);
});
