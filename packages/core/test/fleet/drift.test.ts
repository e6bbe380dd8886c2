import { describe, expect, it } from 'vitest';
import {
  definitionGroups,
  definitionIndex,
  disagreeingNames,
  driftingJobs,
} from '../../src/fleet/drift.js';
import type { LiveInstance, RegisteredJob } from '../../src/registry.js';

const job = (name: string, hash: string): RegisteredJob => ({
  name,
  trigger: 'every(1000ms)',
  spec: null,
  definitionHash: hash,
  leaseMs: 30_000,
  overlap: 'skip',
  catchUp: 'skip',
});

const instance = (instanceId: string, jobs: RegisteredJob[]): LiveInstance =>
  ({ instanceId, jobs }) as unknown as LiveInstance;

describe('drift: definition groups of the live instances', () => {
  const fleet = [
    instance('c', [job('a', 'h1'), job('b', 'h2')]),
    instance('a', [job('a', 'h1'), job('b', 'h3')]),
    instance('b', [job('a', 'h1'), job('b', 'h3'), job('only-b', 'h9')]),
  ];

  it('groups by hash, largest group first, instances sorted; more than one group is drift', () => {
    expect(definitionGroups(fleet, 'b').map((g) => [g.hash, g.instances])).toEqual([
      ['h3', ['a', 'b']],
      ['h2', ['c']],
    ]);
    expect(definitionGroups(fleet, 'a').map((g) => [g.hash, g.instances])).toEqual([
      ['h1', ['a', 'b', 'c']],
    ]);
    expect(definitionGroups(fleet, 'none')).toEqual([]);
    expect(driftingJobs(fleet)).toEqual(['b']);
  });

  it('the one-pass index answers as definitionGroups of each name, and only the names asked', () => {
    const index = definitionIndex(fleet);
    expect([...index.keys()].sort()).toEqual(['a', 'b', 'only-b']);
    for (const name of index.keys()) expect(index.get(name)).toEqual(definitionGroups(fleet, name));
    expect([...definitionIndex(fleet, new Set(['a'])).keys()]).toEqual(['a']);
  });

  it('disagreeingNames: exactly the names with more than one group, among the names asked', () => {
    const late = instance('d', [job('a', 'h1'), job('b', 'h2'), job('only-b', 'h8')]);
    const wider = [...fleet, late];
    const index = definitionIndex(wider);
    const drifting = [...index.keys()].filter((name) => (index.get(name)?.length ?? 0) > 1);
    expect([...disagreeingNames(wider)].sort()).toEqual(drifting.sort());
    expect([...disagreeingNames(wider)].sort()).toEqual(['b', 'only-b']);
    expect([...disagreeingNames(wider, new Set(['a', 'only-b']))]).toEqual(['only-b']);
    expect([...disagreeingNames(fleet, new Set(['a', 'none']))]).toEqual([]);
  });
});
