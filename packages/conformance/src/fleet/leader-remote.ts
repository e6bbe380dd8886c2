import type { Elector, Lock } from '@fleetcron/core';
import { methodNames } from './remote.js';

/** The elector steps a child in leader mode sends (see `remoteElector`). */
const ELECTOR_STEPS = ['campaign', 'renew', 'resign', 'leader'] as const;

/**
 * What a child instance in leader mode is served as its `lock` target: every method of `lock`,
 * plus the elector's steps (`campaign`, `renew`, `resign`, `leader`, which no lock method is
 * named), so one IPC channel carries both and a SIGSTOPped child freezes its claims and its
 * renewals of the term alike. Throws when `lock` already has a method of that name.
 */
export function withElector(lock: Lock, elector: Elector): Lock {
  const target: Record<string, unknown> = {
    backend: lock.backend,
    capabilities: lock.capabilities,
    windowMs: lock.windowMs,
  };
  const source = lock as unknown as Record<string, (...args: unknown[]) => unknown>;
  for (const name of methodNames(lock)) target[name] = source[name]!.bind(lock);
  const steps = elector as unknown as Record<string, (...args: unknown[]) => unknown>;
  for (const step of ELECTOR_STEPS) {
    if (step in target) {
      throw new Error(
        `the lock has a method named ${step}: it cannot share a channel with an elector`,
      );
    }
    target[step] = steps[step]!.bind(elector);
  }
  return target as unknown as Lock;
}
