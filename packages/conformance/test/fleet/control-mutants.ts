import type {
  ClaimRequest,
  ClaimResult,
  FleetStore,
  Lock,
  Store,
  TakenRunRequest,
} from '@fleetcron/core';
import { type FleetInstanceFactory, schedulerInstance } from '../../src/fleet/instance.js';

/**
 * Mutant fleets for the self-test of the fleet-control scenarios: the real `Scheduler`, with one
 * piece of fleet control broken by wrapping what it is given. Each scenario must fail on its
 * mutant. Loaded by URL (children import this module too).
 */

/** Copies every own and inherited method of `inner` onto a plain object, bound to `inner`. */
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

/** fc1: the store hides the registry (no heartbeat): the fleet never learns of drift. */
export const noRegistry: FleetInstanceFactory = (deps) => {
  const store = copyOf(deps.store!) as Store & Record<string, unknown>;
  delete store.heartbeat;
  return schedulerInstance({ ...deps, store });
};

/** fc2: the scheduler never sees a run request (none taken, no push). */
export const ignoresRunRequests: FleetInstanceFactory = (deps) => {
  const store = copyOf(deps.store!);
  store.takeRunRequests = async () => [];
  store.watchRunRequests = () => () => {};
  return schedulerInstance({ ...deps, store });
};

/** fc3: every catch-up claim is refused as behind the mark: no missed fire is ever caught up. */
export const refusesCatchUp: FleetInstanceFactory = (deps) => {
  const lock: Lock = copyOf(deps.lock);
  const refused = (request: ClaimRequest): ClaimResult => ({
    status: 'lost',
    key: request.key,
    fireAt: request.fireAt,
    reason: 'behind_mark',
  });
  const { claim, claimMany } = lock;
  lock.claim = (request) =>
    request.catchUp === undefined ? claim(request) : Promise.resolve(refused(request));
  if (claimMany) {
    // the scheduler sends its claims, catch-up ones included, through claimMany when it exists
    lock.claimMany = async (requests, options) => {
      const ordinary = requests.filter((r) => r.catchUp === undefined);
      const answers = ordinary.length > 0 ? await claimMany(ordinary, options) : [];
      let next = 0;
      return requests.map((r) => (r.catchUp === undefined ? answers[next++]! : refused(r)));
    };
  }
  return schedulerInstance({ ...deps, lock });
};

/** fc4: a `lease_lost` outcome is never written: the dead holder's row stays `running`. */
export const dropsLeaseLost: FleetInstanceFactory = (deps) => {
  const store = copyOf(deps.store!);
  const record = store.record;
  store.record = (execution) =>
    execution.status === 'lease_lost' ? Promise.resolve() : record(execution);
  return schedulerInstance({ ...deps, store });
};

/**
 * fc5: the mark reads as if it had moved to 2.5 s ago (another instance's claims moved it while
 * it caught up, as when each missed fire was claimed on its own): the older missed fires are
 * never caught up.
 */
export const laggingMarkRead: FleetInstanceFactory = (deps) => {
  const lock: Lock = copyOf(deps.lock);
  const lagging = (mark: number | null) =>
    mark === null ? null : Math.max(mark, Date.now() - 2_500);
  const { inspect, readMarks } = lock;
  lock.inspect = async (key) => {
    const inspection = await inspect(key);
    return { ...inspection, mark: lagging(inspection.mark) };
  };
  if (readMarks) {
    // catch-up at start() reads its marks in batches through readMarks where the lock has it
    lock.readMarks = async (keys, options) => {
      const reading = await readMarks(keys, options);
      return { ...reading, marks: reading.marks.map(lagging) };
    };
  }
  return schedulerInstance({ ...deps, lock });
};

/**
 * fc6: run requests at most once: a take consumes what it returns (decided at once underneath),
 * and the scheduler is shown no decision methods. A taker that dies after the take loses it.
 */
export const consumesRunRequests: FleetInstanceFactory = (deps) => {
  const inner = deps.store! as Store & Required<FleetStore>;
  const store = copyOf(inner) as Store & Record<string, unknown>;
  store.takeRunRequests = async (jobs: readonly string[], instanceId: string) => {
    const taken = (await inner.takeRunRequests(jobs, instanceId)) as TakenRunRequest[];
    for (const r of taken) await inner.decideRunRequest(r.id, r.takeId, { fireAt: 0, instanceId });
    return taken.map(({ id, job, requestedBy, requestedAt, data }) => ({
      ...{ id, job, requestedBy, requestedAt, data },
    }));
  };
  delete store.decideRunRequest;
  delete store.releaseRunRequest;
  return schedulerInstance({ ...deps, store });
};

/** fc7: giving a request back does nothing: it waits for the take's lease instead. */
export const ignoresReleases: FleetInstanceFactory = (deps) => {
  const store = copyOf(deps.store!);
  store.releaseRunRequest = async () => {};
  return schedulerInstance({ ...deps, store });
};

/** fc8: takes ask for a 1 ms lease: a request whose take reply was lost is taken again at once. */
export const shortTakeLease: FleetInstanceFactory = (deps) => {
  const inner = deps.store! as Store & FleetStore;
  const store = copyOf(inner);
  store.takeRunRequests = (jobs: readonly string[], instanceId: string) =>
    inner.takeRunRequests(jobs, instanceId, { leaseMs: 1 });
  return schedulerInstance({ ...deps, store });
};
