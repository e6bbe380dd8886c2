/**
 * One fire, from its claim to its released lease: the fire path that launches and tracks every
 * fire (scheduled, caught up, manual, holder-lost rerun), the fire itself (`FireRun`), its steps
 * (claim, paused check, the middleware chain), its history rows and its events.
 */
export type { ClaimOutcome } from './claim.js';
export type { SkipReason } from './fire-events.js';
export { FireEvents } from './fire-events.js';
export { FirePath } from './fire-path.js';
export type { FireRun } from './fire-run.js';
export type { FireKind, FireOutcome, FireState } from './fire-types.js';
export { HistoryWriter, logUnwritten } from './history-writer.js';
export type { ManualRunOutcome, ManualRuns, RunRequestTakes } from './manual-runs.js';
export { safeCall, safeLogger, safePublish } from './safe.js';
