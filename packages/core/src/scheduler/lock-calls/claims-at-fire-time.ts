import type { Clock } from '../../clock.js';
import type { ClaimRequest } from '../../lock.js';
import type { LifecycleView } from '../lifecycle.js';
import type { GiveUp, QueueEntry, TimerQueue } from '../timing/index.js';
import type { ClaimSender, SentClaim } from './claim-batch.js';

/** A claim prepared ahead of its fire, waiting for the fire's time. */
class Parked {
  /** Drops the claim unsent when its fire gives up on it while it waits. */
  readonly onGiveUp = (): void => {
    if (this.group.members.delete(this)) this.resolve(null);
  };

  constructor(
    readonly request: ClaimRequest,
    readonly giveUp: GiveUp,
    readonly wanted: () => boolean,
    readonly resolve: (sent: Promise<SentClaim | null> | null) => void,
    readonly group: ParkedGroup,
  ) {}
}

/** The claims parked for one fire time, the queue entry that sends them, and its stop hook. */
interface ParkedGroup {
  readonly fireAt: number;
  readonly members: Set<Parked>;
  readonly entry: QueueEntry;
  readonly stopped: AbortSignal;
  readonly release: () => void;
}

/**
 * Holds every claim until its fire is due on the fleet's clock (with a job's jitter: its offset
 * after the fire time, the `at` of `send`), then hands it to `inner` (the
 * batcher or the single-claim slots). The job slots wake ahead of a fire (`FireTimeGroups`)
 * and build the fire and its claim then, so the claims of a burst leave together at the fire
 * time instead of after thousands of fires were built: what is late is the lock's answer, not
 * this instance's own preparation.
 *
 * A claim is never sent before its fire time (the lock would refuse it `early`). A parked claim
 * is dropped unsent (resolves `null`, as a claim dropped by its batch) when its `giveUp` aborts,
 * or at once when `stop()` begins (`stopped` aborts; `wanted()` then says no).
 */
export class ClaimsAtFireTime implements ClaimSender {
  private readonly groups = new Map<number, ParkedGroup>();

  constructor(
    private readonly inner: ClaimSender,
    private readonly clock: Clock,
    private readonly queue: TimerQueue,
    private readonly life: Pick<LifecycleView, 'stopSignal'>,
  ) {}

  send(
    request: ClaimRequest,
    giveUp: GiveUp,
    wanted: () => boolean,
    at?: number,
  ): Promise<SentClaim | null> {
    const fireAt = Math.max(request.fireAt, at ?? request.fireAt); // parked until then
    const group = giveUp.aborted || fireAt <= this.clock.now() ? null : this.groupOf(fireAt);
    if (!group) return this.inner.send(request, giveUp, wanted); // due (or dropped there at once)
    return new Promise<SentClaim | null>((resolve) => {
      const parked = new Parked(request, giveUp, wanted, resolve, group);
      group.members.add(parked);
      giveUp.addEventListener('abort', parked.onGiveUp);
    });
  }

  /** Passes on to the inner sender (parked claims leave on their own queue entry). */
  sendQueued(): void {
    this.inner.sendQueued();
  }

  /** Claims waiting for their fire time (tests and metrics). */
  get parked(): number {
    let n = 0;
    for (const group of this.groups.values()) n += group.members.size;
    return n;
  }

  /** The group of `fireAt`, opened on first use; `null` once `stop()` began (nothing parks). */
  private groupOf(fireAt: number): ParkedGroup | null {
    const group = this.groups.get(fireAt);
    if (group) return group;
    const stopped = this.life.stopSignal;
    return stopped.aborted ? null : this.openGroup(fireAt, stopped);
  }

  private openGroup(fireAt: number, stopped: AbortSignal): ParkedGroup {
    const release = () => this.release(group);
    const group: ParkedGroup = {
      ...{ fireAt, members: new Set<Parked>(), stopped, release },
      entry: this.queue.atWall(fireAt, release),
    };
    // stop() begins: the parked claims are handed on now (and dropped unsent there, as no
    // longer wanted), not at their fire time
    group.stopped.addEventListener('abort', release, { once: true });
    this.groups.set(fireAt, group);
    return group;
  }

  private closeGroup(group: ParkedGroup): void {
    if (this.groups.get(group.fireAt) !== group) return;
    this.queue.cancel(group.entry);
    group.stopped.removeEventListener('abort', group.release);
    this.groups.delete(group.fireAt);
  }

  /**
   * The fire time came (or `stop()` began): hands every parked claim of it to the inner sender,
   * which sends them with the rest of this timer wake's claims (its end flushes the batch).
   */
  private release(group: ParkedGroup): void {
    if (this.groups.get(group.fireAt) !== group) return;
    this.closeGroup(group);
    for (const parked of group.members) {
      parked.giveUp.removeEventListener('abort', parked.onGiveUp);
      parked.resolve(this.inner.send(parked.request, parked.giveUp, parked.wanted));
    }
    group.members.clear();
  }
}
