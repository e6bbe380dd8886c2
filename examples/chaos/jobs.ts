import { cron, every, type Trigger } from '@fleetcron/core';

/** One job of the chaos fleet: how it fires, how long it works, and its overlap policy. */
export interface ChaosJob {
  name: string;
  trigger: Trigger;
  /** How long one run works (sleeping on its signal), ms. */
  workMs: number;
  /** `'skip'`: one lease per job (token order is checked); `'allow'`: one lease per fire. */
  overlap: 'skip' | 'allow';
}

/** Lease of every chaos job: wide enough for a loaded 2-core machine, above etcd's 2 s minimum. */
export const CHAOS_LEASE_MS = 3_000;

const job = (
  name: string,
  trigger: Trigger,
  workMs: number,
  overlap: 'skip' | 'allow' = 'skip',
): ChaosJob => ({ name, trigger, workMs, overlap });

/**
 * The 20 jobs every instance registers: short and long, every second, every two seconds, cron
 * seconds, a few longer than their period (so fires meet a held lease and are skipped by policy)
 * and a few with `overlap: 'allow'`. Runs longer than a third of the lease are renewed while
 * they work, so SIGSTOP and server faults hit renewals as well as claims.
 */
export const CHAOS_JOBS: readonly ChaosJob[] = [
  job('tick-1s-a', every(1_000), 20),
  job('tick-1s-b', every(1_000), 80),
  job('tick-1s-c', every(1_000), 200),
  job('tick-1s-d', every(1_000), 400),
  job('tick-1s-e', every(1_000, { anchor: 500 }), 100),
  job('tick-1s-f', every(1_000, { anchor: 250 }), 600),
  job('tick-2s-a', every(2_000), 50),
  job('tick-2s-b', every(2_000), 300),
  job('tick-2s-c', every(2_000), 800),
  job('tick-2s-d', every(2_000, { anchor: 1_000 }), 1_200),
  job('tick-2s-e', every(2_000, { anchor: 700 }), 1_500),
  job('cron-3s', cron('*/3 * * * * *'), 150),
  job('cron-4s', cron('*/4 * * * * *'), 1_000),
  job('cron-5s-long', cron('*/5 * * * * *'), 2_500),
  job('cron-6s-long', cron('1/6 * * * * *'), 4_500),
  job('overrun-1s', every(1_000), 1_500),
  job('overrun-2s', every(2_000), 2_600),
  job('overrun-3s', every(3_000), 5_000),
  job('allow-1s', every(1_000), 1_300, 'allow'),
  job('allow-2s', every(2_000, { anchor: 300 }), 2_200, 'allow'),
];
