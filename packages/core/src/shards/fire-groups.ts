import type { Execution, RunStatus } from '../store.js';

/**
 * One fire as history shows it: a plain fire has one execution; a sharded fire (`shards: n`)
 * has one per part; a broadcast fire (`shards: 'each'`) one per instance that ran it.
 */
export interface FireGroup {
  job: string;
  /** The fire's scheduled time, epoch ms. */
  fireAt: number;
  /** `parts` for `shards: n`, `each` for `shards: 'each'`, `single` for a plain fire. */
  kind: 'single' | 'parts' | 'each';
  /** For `parts`: the number of parts of the fire (`n`); otherwise `null`. */
  count: number | null;
  /**
   * The fire's executions, in history order (newest first) for a plain fire; by part index
   * (`parts`) or by instance id (`each`) otherwise.
   */
  executions: Execution[];
  /** How many of `executions` have each status. */
  statuses: Partial<Record<RunStatus, number>>;
  /**
   * For `parts`: the part indexes with no execution in this group (not started yet, claimed
   * by nobody so far, or on another page of history). Empty otherwise.
   */
  missingParts: number[];
}

/**
 * Groups history rows (newest first, e.g. one `history()` page) into fires: rows of the same
 * job and `fireAt` that carry a `shard` form one fire with its parts; every other row is a fire
 * of its own. Groups keep the order of their newest row. A page boundary may split one fire's
 * parts over two pages; each page then shows the parts it holds.
 */
export function groupFires(executions: readonly Execution[]): FireGroup[] {
  const groups: FireGroup[] = [];
  const sharded = new Map<string, FireGroup>();
  for (const execution of executions) {
    const shard = execution.shard ?? null;
    if (shard === null) {
      groups.push(newGroup(execution, 'single', null));
      continue;
    }
    const kind = shard.each ? 'each' : 'parts';
    const id = JSON.stringify([
      execution.job,
      execution.fireAt,
      kind,
      kind === 'parts' ? shard.count : 0,
    ]);
    let group = sharded.get(id);
    if (!group) {
      group = newGroup(execution, kind, kind === 'parts' ? shard.count : null);
      sharded.set(id, group);
      groups.push(group);
    } else {
      group.executions.push(execution);
      group.statuses[execution.status] = (group.statuses[execution.status] ?? 0) + 1;
    }
  }
  for (const group of sharded.values()) {
    if (group.kind === 'parts') {
      group.executions.sort((a, b) => (a.shard?.index ?? 0) - (b.shard?.index ?? 0));
      const seen = new Set(group.executions.map((e) => e.shard?.index));
      for (let i = 0; i < (group.count ?? 0); i++) if (!seen.has(i)) group.missingParts.push(i);
    } else {
      group.executions.sort((a, b) =>
        a.instanceId < b.instanceId ? -1 : a.instanceId > b.instanceId ? 1 : 0,
      );
    }
  }
  return groups;
}

function newGroup(execution: Execution, kind: FireGroup['kind'], count: number | null): FireGroup {
  return {
    job: execution.job,
    fireAt: execution.fireAt,
    kind,
    count,
    executions: [execution],
    statuses: { [execution.status]: 1 },
    missingParts: [],
  };
}

/** A one-line summary of a group's statuses, e.g. `8 parts: 7 succeeded, 1 running`. */
export function describeFireGroup(group: FireGroup): string {
  const statuses = Object.entries(group.statuses)
    .map(([status, n]) => `${n} ${status}`)
    .join(', ');
  if (group.kind === 'single') return statuses;
  const what =
    group.kind === 'parts'
      ? `${group.count} parts`
      : `${group.executions.length} instance${group.executions.length === 1 ? '' : 's'}`;
  const missing =
    group.missingParts.length > 0 ? `, ${group.missingParts.length} not recorded` : '';
  return `${what}: ${statuses}${missing}`;
}
