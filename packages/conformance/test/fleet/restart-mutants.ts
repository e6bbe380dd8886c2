import type { ClaimRequest, ClaimResult, Execution, Lock, Store } from '@fleetcron/core';
import { type FleetInstanceFactory, schedulerInstance } from '../../src/fleet/instance.js';

/**
 * Mutant fleets for the self-test of the many-jobs restart scenarios: the real `Scheduler`, with
 * what it is given wrapped so that a restart's catch-up costs the next fires. Each scenario must
 * fail on its mutant. Loaded by URL (the children import this module).
 */

/** A plain object with every method of `inner` bound to it (own and inherited). */
function copyOf<T extends object>(inner: T): T {
  const copy: Record<string, unknown> = {};
  for (let o: object | null = inner; o && o !== Object.prototype; o = Object.getPrototypeOf(o)) {
    for (const name of Object.getOwnPropertyNames(o)) {
      const value = (inner as Record<string, unknown>)[name];
      if (name in copy || name === 'constructor') continue;
      copy[name] = typeof value === 'function' ? value.bind(inner) : value;
    }
  }
  return copy as T;
}

/**
 * rm1: the first regular claim of a job after its catch-up pass (its mark read, or a catch-up
 * claim sent) is answered `busy` without reaching the backend, as if the catch-up still held
 * the job: the fire after a restart is lost on every instance. The mark read counts too: an
 * instance whose re-read finds the job decided by another sends no catch-up claim, and would
 * otherwise win that fire (the mutant then failed nothing, by timing).
 */
export const busyAfterCatchUp: FleetInstanceFactory = (deps) => {
  const lock: Lock = copyOf(deps.lock);
  const caughtUp = new Set<string>();
  /** The faked answer, or `null` to send the request. */
  const intercept = (request: ClaimRequest): ClaimResult | null => {
    if (request.catchUp !== undefined) {
      caughtUp.add(request.key);
      return null;
    }
    if (!caughtUp.delete(request.key)) return null;
    return { status: 'busy', key: request.key, fireAt: request.fireAt };
  };
  const { claim, claimMany, readMarks, inspect } = lock;
  if (readMarks) {
    lock.readMarks = (keys, options) => {
      for (const key of keys) caughtUp.add(key);
      return readMarks(keys, options);
    };
  }
  lock.inspect = (key) => {
    caughtUp.add(key);
    return inspect(key);
  };
  lock.claim = (request) => {
    const faked = intercept(request);
    return faked ? Promise.resolve(faked) : claim(request);
  };
  if (claimMany) {
    lock.claimMany = async (requests, options) => {
      const faked = requests.map(intercept);
      const sent = requests.filter((_, i) => faked[i] === null);
      const answers = sent.length > 0 ? await claimMany(sent, options) : [];
      let next = 0;
      return faked.map((f) => f ?? answers[next++]!);
    };
  }
  return schedulerInstance({ ...deps, lock });
};

/**
 * rm2: once this instance recorded a missed fire (its catch-up under `'skip'`), the outcome rows
 * of its later runs are dropped (answered, never written), as a scheduler whose history falls
 * behind and sheds its backlog: those runs keep a `running` row and no `succeeded` one.
 */
export const droppingOutcomesAfterCatchUp: FleetInstanceFactory = (deps) => {
  const store: Store = copyOf(deps.store!);
  const { record } = store;
  let behind = false;
  store.record = async (execution: Execution) => {
    if (execution.status === 'skipped' && execution.reason === 'missed') behind = true;
    else if (behind && execution.status === 'succeeded') return;
    return record(execution);
  };
  // the batched path too, row by row, so both ways of writing shed the same rows
  store.recordMany = async (executions: readonly Execution[]) => {
    for (const execution of executions) await store.record(execution);
  };
  return schedulerInstance({ ...deps, store });
};
