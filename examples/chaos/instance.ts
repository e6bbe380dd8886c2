/**
 * One instance of the chaos fleet, run as its own OS process by `run.ts` (through `fleet.ts`):
 * a Scheduler with the 20 {@link CHAOS_JOBS} on the chosen backend, writing every job start and
 * end, and every scheduler event of its fires, to its own append-only ledger file.
 *
 * Environment: `FLEETCRON_CHAOS_BACKEND` (a backend or an HA topology name), `FLEETCRON_CHAOS_ADDRESS`, `FLEETCRON_CHAOS_LEDGER`
 * (file), `FLEETCRON_CHAOS_INSTANCE` (id), `FLEETCRON_CHAOS_SKEW_MS` (the skew libfaketime
 * applies, recorded in the `boot` line). SIGTERM stops the scheduler cleanly and exits 0.
 */
import { type FleetcronEvent, type JobContext, Scheduler, subscribe } from '@fleetcron/core';
import { chaosTargetName, loadChaosTarget } from './backends.js';
import { CHAOS_JOBS, CHAOS_LEASE_MS, type ChaosJob } from './jobs.js';
import { type LedgerLine, LedgerWriter, monoNow } from './ledger.js';

function env(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: start instances through examples/chaos/run.ts`);
  return value;
}

/** The job's view of its lease (`ctx.lease`), when this build of core offers it. */
interface LeaseView {
  remainingMs(): number;
  assertValid(): void;
}

const leaseOf = (ctx: JobContext) => (ctx as { lease?: LeaseView }).lease;

/** The lease deadline the job believes, on the machine's monotonic clock. */
function leaseDeadline(ctx: JobContext): number | undefined {
  const lease = leaseOf(ctx);
  return lease ? monoNow() + lease.remainingMs() : undefined;
}

/** The ledger line an event becomes, or `undefined` for events the judge does not read. */
function eventLine(
  e: FleetcronEvent,
): Omit<LedgerLine, 'instance' | 'mono' | 'wall' | 'real'> | undefined {
  const fire = { job: e.job, fireAt: e.fireAt };
  switch (e.type) {
    case 'claim.won':
      return { kind: 'won', ...fire, token: e.token };
    case 'lease.renewed':
      return { kind: 'renewed', ...fire, token: e.token };
    case 'lease.lost':
      return { kind: 'lost', ...fire, token: e.token };
    case 'run.finished':
      return { kind: 'finished', ...fire, token: e.token, status: e.status };
    case 'fire.skipped':
      return { kind: 'skipped', ...fire, reason: e.reason };
    case 'claim.failed':
      return { kind: 'claim_failed', ...fire, error: e.error.message };
    case 'store.failed':
      return { kind: 'store_failed', ...fire, error: e.error.message };
    default:
      return undefined;
  }
}

function jobRunner(job: ChaosJob, ledger: LedgerWriter) {
  return async (ctx: JobContext): Promise<void> => {
    const fire = { job: job.name, fireAt: ctx.fireAt.getTime(), token: ctx.token };
    // the start line is this job's side effect: check the lease right before it, as the core
    // README advises (throws LeaseLostError past the deadline)
    leaseOf(ctx)?.assertValid();
    ledger.write({ kind: 'start', ...fire, believedDeadline: leaseDeadline(ctx) });
    let outcome: 'ok' | 'aborted' | 'error' = 'ok';
    try {
      await ctx.clock.sleep(job.workMs, ctx.signal);
    } catch (error) {
      outcome = ctx.signal.aborted ? 'aborted' : 'error';
      throw error;
    } finally {
      ledger.write({ kind: 'end', ...fire, outcome, believedDeadline: leaseDeadline(ctx) });
    }
  };
}

async function main(): Promise<void> {
  const instanceId = env('FLEETCRON_CHAOS_INSTANCE');
  const skewMs = Number(env('FLEETCRON_CHAOS_SKEW_MS'));
  const ledger = new LedgerWriter(env('FLEETCRON_CHAOS_LEDGER'), instanceId, skewMs);
  const crash = (error: unknown) => {
    ledger.write({ kind: 'crash', error: String((error as Error)?.stack ?? error) });
    process.exit(70);
  };
  process.on('uncaughtException', crash);
  process.on('unhandledRejection', crash);
  ledger.write({ kind: 'boot', skewMs, pid: process.pid });

  const backend = await loadChaosTarget(chaosTargetName(env('FLEETCRON_CHAOS_BACKEND')));
  const client = await backend.connect(env('FLEETCRON_CHAOS_ADDRESS'));
  const scheduler = new Scheduler({
    lock: client.lock,
    store: client.store,
    instanceId,
    leaseMs: CHAOS_LEASE_MS,
    drainMs: 2_000,
    maxConcurrentClaims: 8,
  });
  const unsubscribe = subscribe((e) => {
    const line = e.instanceId === instanceId ? eventLine(e) : undefined;
    if (line) ledger.write(line);
  });
  for (const job of CHAOS_JOBS) {
    scheduler.add({
      name: job.name,
      trigger: job.trigger,
      overlap: job.overlap,
      run: jobRunner(job, ledger),
    });
  }
  scheduler.start();
  // up: loading the backend's client and connecting can take seconds on a loaded machine (CI at
  // 6a679b0: an etcd instance's first claim came ~4.5 s after its boot line), and fires due
  // before this line are not this process's to miss
  ledger.write({ kind: 'ready' });

  // never outlive the driver: its IPC channel closes when it dies
  process.on('disconnect', () => process.kill(process.pid, 'SIGTERM'));
  process.channel?.unref();

  let stopping = false;
  process.on('SIGTERM', () => {
    if (stopping) return;
    stopping = true;
    void (async () => {
      await scheduler.stop();
      unsubscribe();
      await client.close();
      ledger.write({ kind: 'exit' });
      ledger.close();
      process.exit(0);
    })().catch(crash);
  });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
