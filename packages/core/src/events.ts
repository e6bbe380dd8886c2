import diagnosticsChannel from 'node:diagnostics_channel';
import type { LostReason } from './lock.js';
import type { ShardInfo } from './shards/shard-info.js';
import type { RunStatus } from './store.js';

/** Name of the `node:diagnostics_channel` channel every fleetcron event is published on. */
export const EVENTS_CHANNEL = 'fleetcron:events';

interface EventBase {
  /** Instance that published the event. */
  instanceId: string;
  /** Job name. */
  job: string;
  /** Scheduled fire time, epoch ms. */
  fireAt: number;
  /** When the event happened on the instance's clock, epoch ms. */
  at: number;
  /**
   * The part of a sharded fire the event is about (`shards: n` or `'each'`); absent for a plain
   * fire. Two parts of one fire on one instance share `job` and `fireAt` but not `shard.index`.
   */
  shard?: ShardInfo | null;
}

/** What every fleet event (not about one fire) carries. */
interface FleetEventBase {
  /** Instance that published the event. */
  instanceId: string;
  /** When the event happened on the instance's clock, epoch ms. */
  at: number;
  /** Absent: a fleet event is not about one fire (kept so `event.fireAt` reads on any event). */
  fireAt?: undefined;
}

/**
 * Events about the fleet rather than one fire: they carry no `fireAt` (narrow on `type`).
 */
export type FleetEvent =
  /**
   * Live instances disagree on the definition of `job` (one of this instance's jobs): published
   * when the disagreement starts or changes, not on every heartbeat. `definitions`: each
   * definition hash with the instances using it, majority first.
   */
  | (FleetEventBase & {
      type: 'fleet.drift';
      job: string;
      definitions: Array<{ hash: string; instances: string[] }>;
    })
  /** The live instances agree again on `job`'s definition (after a `fleet.drift`). */
  | (FleetEventBase & { type: 'fleet.drift_resolved'; job: string })
  /** A heartbeat into the store (or reading the live instances) failed; fires are not affected. */
  | (FleetEventBase & { type: 'heartbeat.failed'; job?: undefined; error: Error })
  /**
   * Delivering an alert event to a notifier failed (see `createAlertDelivery`): `attempt` is the
   * attempt that failed (1-based); `retryInMs` the wait before the next one, or `null` when the
   * delivery gave up (attempts or time used up, a failure not worth retrying, or stopped).
   */
  | (FleetEventBase & {
      type: 'alert.delivery_failed';
      job?: string;
      notifier: string;
      alertId: string;
      alertKey: string;
      action: 'opened' | 'resolved';
      attempt: number;
      retryInMs: number | null;
      error: Error;
    })
  /**
   * Leader mode (`mode: 'leader'`): this instance was elected leader of `election`
   * (`isLeader: true`, `term` its new term), or its term ended (`isLeader: false`, `term` the
   * term it lost: resigned, replaced, or its local deadline passed). Only the leader claims the
   * fires of plain jobs.
   */
  | (FleetEventBase & {
      type: 'leader.changed';
      job?: undefined;
      election: string;
      isLeader: boolean;
      term: number;
    });

/**
 * Lifecycle events of a fire, and {@link FleetEvent}s. Exporters (OpenTelemetry, logs) subscribe with
 * {@link subscribe}; core never depends on them.
 */
export type FleetcronEvent =
  /** The next fire of a job was computed and placed on the timer. */
  | (EventBase & { type: 'fire.scheduled' })
  /**
   * The job's `exclude` calendar excludes this fire (`reason`, e.g. `holiday: Christmas Day`): it
   * is not claimed here, nor on any other instance (each publishes this event), and not owed by
   * catch-up. Manual runs are not excluded.
   */
  | (EventBase & { type: 'fire.excluded'; reason: string })
  /**
   * Not claimed here: during a rolling deploy, another definition of the job is in force for
   * this fire (`inForce`: its definition hash; `null` when none is, e.g. while this instance's
   * new definition waits for its turn). See the core README's "Rolling deploys".
   */
  | (EventBase & { type: 'fire.superseded'; inForce: string | null })
  /** A fire's time passed while the process could not act (blocked event loop, suspend). */
  | (EventBase & { type: 'fire.missed'; lateMs: number })
  /** This instance won the fire. */
  | (EventBase & { type: 'claim.won'; backend: string; token: number; latencyMs: number })
  /** Another instance has the fire, or it is stale. */
  | (EventBase & { type: 'claim.lost'; backend: string; reason: LostReason; latencyMs: number })
  /** The previous run still holds the job's lease; this fire is recorded as skipped. */
  | (EventBase & { type: 'claim.busy'; backend: string; latencyMs: number })
  /** The lock threw (backend unavailable): the fire is skipped, never run unprotected. */
  | (EventBase & { type: 'claim.failed'; backend: string; error: Error; latencyMs: number })
  /**
   * The fire was not run; `reason` is a `SkipReason`: `overlap`, `paused`, `backend_unavailable`,
   * `stopping`, or `lease_expired` (the lease's local deadline passed before the job could start,
   * e.g. the process froze between claim and start; the claim was handed back).
   */
  | (EventBase & { type: 'fire.skipped'; reason: string })
  /** A run started (after the claim, before middleware). */
  | (EventBase & { type: 'run.started'; token: number; lagMs: number })
  /**
   * A run ended: `status` is `succeeded`, `failed`, `timed_out`, `lease_lost` (published as soon
   * as the lease is lost, even while a job that ignores its signal still runs) or `aborted`
   * (still running at `stop()`'s drain deadline).
   */
  | (EventBase & {
      type: 'run.finished';
      token: number;
      status: RunStatus;
      attempt: number;
      durationMs: number;
      error: Error | null;
    })
  /** The lease was renewed while the job runs. */
  | (EventBase & { type: 'lease.renewed'; token: number; expiresAt: number })
  /**
   * The lease's local deadline passed (no renewal in time, `extend` answered it is not ours, or
   * the process froze past it); the job's signal was aborted with `LeaseLostError`.
   */
  | (EventBase & { type: 'lease.lost'; token: number; error: Error | null })
  /**
   * The job's trigger threw or broke its contract (a time not after its argument, an invalid
   * Date) when asked for the fire after `fireAt`: the job gets no further fires on this instance.
   */
  | (EventBase & { type: 'trigger.failed'; error: Error })
  /** Writing history to the store failed; the run itself was not affected. */
  | (EventBase & { type: 'store.failed'; error: Error })
  /**
   * A run of the `historyRetention` job (`job`: its name) ended its walk: `deleted` executions
   * over `jobsVisited` jobs; `stoppedBy` `done`, `budget` (its `rowsPerRun` used up) or `signal`.
   */
  | (EventBase & {
      type: 'history.pruned';
      deleted: number;
      jobsVisited: number;
      stoppedBy: 'done' | 'budget' | 'signal';
    })
  /**
   * The instance's estimate of the fleet's clock changed, from the backend time carried by the
   * answer to this fire's claim or renewal: `offsetMs` = backend clock − this instance's wall
   * clock (positive: this clock runs behind), true within `± boundMs`; `rttMs` the round trip of
   * the sample it rests on.
   */
  | (EventBase & {
      type: 'clock.offset';
      backend: string;
      offsetMs: number;
      rttMs: number;
      boundMs: number;
    })
  | FleetEvent;

/** The `type` of every event. */
export type FleetcronEventType = FleetcronEvent['type'];

const channel = diagnosticsChannel.channel(EVENTS_CHANNEL);

/** Publishes an event; costs almost nothing when nobody subscribes. */
export function publish(event: FleetcronEvent): void {
  if (channel.hasSubscribers) channel.publish(event);
}

/**
 * Calls `listener` for every fleetcron event of every scheduler in the process. Returns a
 * function that unsubscribes. A listener that throws does not disturb the scheduler.
 */
export function subscribe(listener: (event: FleetcronEvent) => void): () => void {
  const handler = (message: unknown) => {
    try {
      listener(message as FleetcronEvent);
    } catch {
      // a faulty listener must never break a fire
    }
  };
  diagnosticsChannel.subscribe(EVENTS_CHANNEL, handler);
  return () => {
    diagnosticsChannel.unsubscribe(EVENTS_CHANNEL, handler);
  };
}
