import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  at,
  every,
  FakeClock,
  isFleetcronError,
  MemoryLock,
  MemoryStore,
  Scheduler,
} from '../../src/index.js';
import { allHistory } from './helpers.js';

describe('stop() (Guarantee 6)', () => {
  it('stops claiming at once and waits for running jobs within the drain time', async () => {
    const fake = new FakeClock();
    const lock = new MemoryLock({ clock: fake });
    const store = new MemoryStore();
    const s = new Scheduler({ lock, store, clock: fake, instanceId: 'a' });
    let finished = 0;
    s.add({
      name: 'job',
      trigger: every(1000),
      overlap: 'allow',
      run: async (ctx) => {
        await ctx.clock.sleep(3_000);
        finished++;
      },
    });
    s.start();
    await fake.advance(1_000);
    expect(s.state).toBe('running');
    let stopped = false;
    const stopping = s.stop({ drainMs: 10_000 }).then(() => {
      stopped = true;
    });
    expect(s.state).toBe('stopping');
    await fake.advance(2_000);
    expect(stopped).toBe(false);
    await fake.advance(1_000);
    await stopping;
    expect(stopped).toBe(true);
    expect(s.state).toBe('idle');
    expect(finished).toBe(1); // no fire claimed after stop()
    expect(fake.pendingTimers()).toBe(0);
    expect((await lock.inspect('job')).leases).toEqual([]);
    const history = await allHistory(store, 'job');
    expect(history.map((e) => e.status)).toEqual(['succeeded']);
  });

  it('past the drain time aborts running jobs with SchedulerStoppedError, records them aborted and releases leases', async () => {
    const fake = new FakeClock();
    const lock = new MemoryLock({ clock: fake });
    const store = new MemoryStore();
    const s = new Scheduler({ lock, store, clock: fake, instanceId: 'a' });
    let reason: unknown = null;
    s.add({
      name: 'polite',
      trigger: at(fake.now() + 1000),
      run: (ctx) =>
        ctx.clock.sleep(60_000, ctx.signal).catch((e) => {
          reason = e;
          throw e;
        }),
    });
    s.add({
      name: 'stubborn',
      trigger: at(fake.now() + 1000),
      run: () => new Promise<void>(() => {}), // ignores its signal, never settles
    });
    s.start();
    await fake.advance(1_000);
    expect((await lock.inspect('stubborn')).leases).toHaveLength(1);
    const stopping = s.stop({ drainMs: 2_000 });
    await fake.advance(5_000);
    await stopping;
    expect(isFleetcronError(reason, 'SCHEDULER_STOPPED')).toBe(true);
    expect((await allHistory(store, 'polite')).map((e) => e.status)).toEqual(['aborted']);
    // the job that ignores its signal is not waited for: recorded aborted, nothing left running
    const [stubborn] = await allHistory(store, 'stubborn');
    expect(stubborn).toMatchObject({ status: 'aborted' });
    expect(stubborn!.error).toContain('SchedulerStoppedError');
    expect((await lock.inspect('polite')).leases).toEqual([]);
    expect((await lock.inspect('stubborn')).leases).toEqual([]);
    expect(fake.pendingTimers()).toBe(0);
  });

  it('can be started again after stop(); stop() on an idle scheduler resolves', async () => {
    const fake = new FakeClock();
    const s = new Scheduler({ lock: new MemoryLock({ clock: fake }), clock: fake });
    await s.stop();
    const ran: number[] = [];
    s.add({ name: 'job', trigger: every(1000), run: (c) => void ran.push(c.fireAt.getTime()) });
    s.start();
    await fake.advance(2_000);
    await s.stop();
    await fake.advance(2_000);
    s.start();
    await fake.advance(1_000);
    await s.stop();
    expect(ran).toHaveLength(3);
    expect(fake.pendingTimers()).toBe(0);
  });

  it('a real process exits by itself after stop() (no process.exit)', async () => {
    const { out, code } = await runChild('child-scheduler.ts');
    expect(out).toContain('stopped after 2 runs');
    expect(out).toContain('event loop empty');
    expect(out).toContain('exit 0');
    expect(code).toBe(0);
  }, 30_000);

  it('a job that ignores its signal is recorded aborted, and the process still exits by itself', async () => {
    const { out, code } = await runChild('child-stubborn.ts');
    expect(out).toContain('stopped; statuses aborted\n');
    expect(out).toContain('event loop empty');
    expect(out).toContain('exit 0');
    expect(code).toBe(0);
  }, 30_000);
});

/** Runs a fixture in a child Node process; its output and exit code (killed after 20 s). */
async function runChild(fixture: string): Promise<{ out: string; code: number | null }> {
  const require = createRequire(import.meta.url);
  const tsx = require.resolve('tsx');
  const script = fileURLToPath(new URL(`./fixtures/${fixture}`, import.meta.url));
  const child = spawn(process.execPath, ['--import', tsx, script], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
  });
  child.stderr.on('data', (d: Buffer) => {
    out += d.toString();
  });
  const deadline = setTimeout(() => child.kill('SIGKILL'), 20_000);
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  clearTimeout(deadline);
  return { out, code };
}
