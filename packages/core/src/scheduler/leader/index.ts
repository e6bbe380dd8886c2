/**
 * Leader mode: its options, and the gate that lets plain fires through only while this
 * instance leads (tracking the fires of each term).
 */
export { LeaderGate } from './leader-gate.js';
export type { LeaderOptions, ResolvedLeader, SchedulerMode } from './leader-options.js';
export {
  DEFAULT_ELECTION,
  DEFAULT_LEADER_TTL_MS,
  DEFAULT_SHARD_GRACE_MS,
  LEADER_OPTION_KEYS,
  resolveLeaderOptions,
} from './leader-options.js';
