import { type Execution, MemoryStore, type PruneJobOptions, type Store } from '@fleetcron/core';
import { compareNewestFirst, resolvePruneJob } from '@fleetcron/core/backend';

/** MemoryStore's private executions map (TypeScript `private` is compile-time only). */
function rowsOf(store: MemoryStore): Map<string, Execution> {
  return (store as unknown as { executions: Map<string, Execution> }).executions;
}

/**
 * A `pruneJob` over MemoryStore's rows with one rule changed: `select` gets the job's rows
 * newest first and the checked bounds, and returns the rows to delete.
 */
function mutant(
  select: (
    newestFirst: Execution[],
    bounds: ReturnType<typeof resolvePruneJob>,
    all: Execution[],
  ) => Execution[],
): new () => Store {
  return class extends MemoryStore {
    override async pruneJob(job: string, options: PruneJobOptions): Promise<number> {
      const bounds = resolvePruneJob(job, options);
      const all = [...rowsOf(this).values()];
      const newestFirst = all.filter((e) => e.job === job).sort(compareNewestFirst);
      const doomed = select(newestFirst, bounds, all);
      for (const e of doomed) rowsOf(this).delete(e.id);
      return doomed.length;
    }
  };
}

const prunable = (e: Execution, rank: number, b: ReturnType<typeof resolvePruneJob>) =>
  (b.keepLast !== null && rank >= b.keepLast) || (b.before !== null && e.startedAt < b.before);

/** (p1) Deletes `running` rows too. */
export const PrunesRunning = mutant((rows, b) =>
  rows
    .filter((e, rank) => prunable(e, rank, b))
    .reverse()
    .slice(0, b.limit),
);

/** (p2) Ignores `limit`: deletes every candidate at once (unbounded work). */
export const IgnoresLimit = mutant((rows, b) =>
  rows.filter((e, rank) => e.status !== 'running' && prunable(e, rank, b)),
);

/** (p3) Orders by `startedAt` only: on ties the id order is the store's insertion order. */
export const TiesByInsertion = mutant((rows, b, all) => {
  const job = rows[0]?.job;
  const byStart = all.filter((e) => e.job === job).sort((x, y) => y.startedAt - x.startedAt);
  return byStart
    .filter((e, rank) => e.status !== 'running' && prunable(e, rank, b))
    .reverse()
    .slice(0, b.limit);
});

/** (p4) Takes the rows of every job whose name starts with `job` (a prefix scan). */
export const PrefixScan = mutant((_rows, b, all) => {
  const job = (_rows[0]?.job ?? '') as string;
  const rows = all.filter((e) => job !== '' && e.job.startsWith(job)).sort(compareNewestFirst);
  return rows
    .filter((e, rank) => e.status !== 'running' && prunable(e, rank, b))
    .reverse()
    .slice(0, b.limit);
});

/** (p5) Only `before` counts when both are given (`keepLast` ignored then). */
export const BeforeOverridesKeepLast = mutant((rows, b) =>
  rows
    .filter(
      (e, rank) =>
        e.status !== 'running' &&
        (b.before !== null ? e.startedAt < b.before : prunable(e, rank, b)),
    )
    .reverse()
    .slice(0, b.limit),
);
