import type { Clock } from '../../clock.js';
import { toError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import { FireEvents } from '../fire/index.js';
import type { LifecycleView } from '../lifecycle.js';
import type { QueueEntry, TimerQueue } from '../timing/index.js';
import { nextFire, planFires } from './fire-plan.js';
import type { NormalizedJob, OverlapPolicy } from './job.js';
import { jitterOffset } from './job-jitter.js';

/** A registered job, as listed by `Scheduler.jobs()`. */
export interface JobInfo {
  name: string;
  /** The trigger's description, e.g. `every(2000ms)`. */
  trigger: string;
  /**
   * The next fire this scheduler will claim (once a fire is prepared, ahead of its time, the one
   * after it: the prepared fire counts in `active`); while the scheduler is not started, the
   * trigger's next fire after now. `null` when the trigger is done.
   */
  nextFireAt: Date | null;
  leaseMs: number;
  overlap: OverlapPolicy;
  /** Fires of this job being claimed or run on this instance right now. */
  active: number;
}

/** One registered job and its next fire (queued in the fire-time groups). */
export interface JobSlot {
  readonly def: NormalizedJob;
  nextFireAt: number | null;
}

/** What the job slots need from their scheduler. */
export interface SlotContext {
  readonly queue: TimerQueue;
  readonly clock: Clock;
  readonly instanceId: string;
  readonly log: Logger;
  /** The lock's claim window, ms (the late-fire rule). */
  readonly windowMs: number;
  /**
   * Whether fires are prepared ahead of their time (claims mode; see `FireTimeGroups`). Leader
   * mode wakes at the fire time: whether this instance leads is decided then, as before (a term
   * won or lost just before a fire must not change who claims it).
   */
  readonly prepareAhead: boolean;
  /** The scheduler's lifecycle: jobs' fires are scheduled while `schedulesFires()`. */
  readonly life: LifecycleView;
  /** Where a due fire goes: the fire path (claimed once the job's catch-up pass allows). */
  readonly fires: { launchScheduled(job: NormalizedJob, fireAt: number): void };
}

/**
 * The registered jobs and their next fires: each job's next fire sits on the scheduler's single
 * timer queue; when it is due, the late-fire plan decides which fire to claim.
 */
export class JobSlots {
  private readonly slots = new Map<string, JobSlot>();
  /** Each slot's next fire, one queue entry per fire time, woken ahead of it. */
  private readonly due: FireTimeGroups<JobSlot>;

  constructor(private readonly c: SlotContext) {
    this.due = new FireTimeGroups(c.queue, c.prepareAhead, (slot) => this.onDue(slot));
  }

  /** The slots by job name. */
  get byName(): ReadonlyMap<string, JobSlot> {
    return this.slots;
  }

  /** The registered jobs' definitions, in the order they were added. */
  defs(): NormalizedJob[] {
    return [...this.slots.values()].map((slot) => slot.def);
  }

  /** Registers a job; its first fire is scheduled when the scheduler runs. */
  add(def: NormalizedJob): void {
    const slot: JobSlot = { def, nextFireAt: null };
    this.slots.set(def.name, slot);
    if (this.c.life.schedulesFires()) this.scheduleFirst(slot);
  }

  /** Unregisters a job; returns whether it was registered. */
  remove(name: string): boolean {
    const slot = this.slots.get(name);
    if (!slot) return false;
    this.cancel(slot);
    this.slots.delete(name);
    return true;
  }

  /**
   * Schedules every job's next fire after `after` (default now). `start()` passes the moment it
   * began, so a fire due while the fleet's clock was being learned is claimed (late) rather than
   * skipped.
   */
  scheduleAll(after?: number): void {
    for (const slot of this.slots.values()) this.scheduleFirst(slot, after);
  }

  /** Takes every job's next fire off the queue. */
  cancelAll(): void {
    this.due.clear();
  }

  /** Every job with its next fire; `active` counts the fires of each job being handled. */
  describe(active: ReadonlyMap<string, number>): JobInfo[] {
    return [...this.slots.values()].map((slot) => ({
      name: slot.def.name,
      trigger: slot.def.trigger.describe(),
      nextFireAt: this.peekNext(slot),
      leaseMs: slot.def.leaseMs,
      overlap: slot.def.overlap,
      active: active.get(slot.def.name) ?? 0,
    }));
  }

  /** The next fire of a slot: the queued one while running, else the trigger's next after now. */
  peekNext(slot: JobSlot): Date | null {
    if (this.c.life.schedulesFires())
      return slot.nextFireAt === null ? null : new Date(slot.nextFireAt);
    try {
      const next = nextFire(slot.def.trigger, this.c.clock.now());
      return next === null ? null : new Date(next);
    } catch {
      return null;
    }
  }

  private cancel(slot: JobSlot): void {
    this.due.remove(slot);
  }

  private scheduleFirst(slot: JobSlot, after?: number): void {
    const now = Math.min(after ?? Number.POSITIVE_INFINITY, this.c.clock.now());
    let first: number | null;
    try {
      first = nextFire(slot.def.trigger, now);
    } catch (error) {
      this.triggerFailed(slot, now, error);
      return;
    }
    this.schedule(slot, first);
  }

  private schedule(slot: JobSlot, fireAt: number | null): void {
    slot.nextFireAt = fireAt;
    if (fireAt === null) {
      this.c.log.info('fleetcron: job has no further fires', { job: slot.def.name });
      return;
    }
    // a job with jitter wakes (and claims) its fixed offset after the fire time
    this.due.add(slot, fireAt + jitterOffset(slot.def, fireAt));
    this.eventsOf(slot, fireAt).scheduled();
  }

  /** The trigger threw or broke its contract asked past `after`: no further fires, never a spin. */
  private triggerFailed(slot: JobSlot, after: number, thrown: unknown): void {
    slot.nextFireAt = null;
    const error = toError(thrown);
    this.eventsOf(slot, after).triggerFailed(error);
    this.c.log.error('fleetcron: trigger failed; the job gets no further fires', {
      job: slot.def.name,
      error,
    });
  }

  private eventsOf(slot: JobSlot, fireAt: number): FireEvents {
    return new FireEvents(this.c.instanceId, slot.def.name, fireAt, this.c.clock);
  }

  /** The single timer woke for this job's next fire. */
  private onDue(slot: JobSlot): void {
    const due = slot.nextFireAt;
    if (!this.c.life.schedulesFires() || this.slots.get(slot.def.name) !== slot || due === null)
      return;
    // woken ahead of the fire (FireTimeGroups): planned as at its time (with jitter: its offset
    // after the fire time, always before the next fire); its claim waits for that time
    const now = Math.max(this.c.clock.now(), due + jitterOffset(slot.def, due));
    let plan: ReturnType<typeof planFires>;
    try {
      plan = planFires(slot.def.trigger, due, now, this.c.windowMs);
    } catch (error) {
      this.triggerFailed(slot, due, error);
      return;
    }
    for (const fireAt of plan.missed) this.eventsOf(slot, fireAt).missed(now - fireAt);
    if (plan.missed.length > 0) {
      this.c.log.warn('fleetcron: woke late; older passed fires are not claimed here', {
        job: slot.def.name,
        missed: plan.missed.length,
        moreUnlisted: plan.unlisted,
        claiming: plan.claim === null ? null : new Date(plan.claim).toISOString(),
      });
    }
    if (plan.failed === undefined) this.schedule(slot, plan.next);
    else this.triggerFailed(slot, plan.claim ?? due, plan.failed);
    if (plan.claim !== null) this.c.fires.launchScheduled(slot.def, plan.claim);
  }
}

/**
 * Least time before a fire its job is prepared, ms (claims mode): the fire is planned and
 * built then, and its claim waits for the fire time (`ClaimsAtFireTime`).
 */
export const PREPARE_AHEAD_MS = 100;

/**
 * Preparation time allowed per fire due at the same instant, ms: a burst of `n` fires is
 * prepared `n × PREPARE_MS_PER_FIRE` ahead (at least {@link PREPARE_AHEAD_MS}, at most
 * {@link MAX_PREPARE_AHEAD_MS}). Building one fire takes 10–40 µs on a 2-core machine, more
 * under load or with several schedulers in one process (the margin); 1,000 fires due together
 * are prepared 200 ms ahead, 10,000 fires 2 s.
 */
export const PREPARE_MS_PER_FIRE = 0.2;

/** Most time before a fire its job is prepared, ms (a burst of 25,000 fires or more). */
export const MAX_PREPARE_AHEAD_MS = 5_000;

/** The members due at one fire time, and the one queue entry that wakes for all of them. */
interface FireTimeGroup<Member> {
  readonly fireAt: number;
  readonly members: Set<Member>;
  entry: QueueEntry;
  /** How long before `fireAt` the entry is keyed, ms. */
  leadMs: number;
}

/**
 * The job slots' next fires, grouped by fire time: one timer-queue entry per distinct fire time
 * (not one per job), keyed `lead` ms before it, where the lead grows with the number of fires
 * due at that instant ({@link leadFor}). When the entry is due, `onDue` is called for every
 * member, in the order they joined. With `prepareAhead: false` (leader mode) the lead is 0.
 */
export class FireTimeGroups<Member> {
  private readonly groups = new Map<number, FireTimeGroup<Member>>();
  private readonly memberOf = new Map<Member, FireTimeGroup<Member>>();

  constructor(
    private readonly queue: TimerQueue,
    private readonly prepareAhead: boolean,
    private readonly onDue: (member: Member) => void,
  ) {}

  /** How long before a fire time with `count` fires due it is prepared, ms. */
  leadFor(count: number): number {
    if (!this.prepareAhead) return 0;
    const lead = Math.max(PREPARE_AHEAD_MS, Math.ceil(count * PREPARE_MS_PER_FIRE));
    return Math.min(lead, MAX_PREPARE_AHEAD_MS);
  }

  /** Queues `member` for fire time `fireAt` (a member is in at most one group: moved if queued). */
  add(member: Member, fireAt: number): void {
    this.remove(member);
    let group = this.groups.get(fireAt);
    if (!group) {
      const leadMs = this.leadFor(1);
      const members = new Set<Member>();
      group = { fireAt, members, leadMs, entry: this.keyed(fireAt, leadMs) };
      this.groups.set(fireAt, group);
    }
    group.members.add(member);
    this.memberOf.set(member, group);
    const leadMs = this.leadFor(group.members.size);
    // re-keyed as the burst grows, in steps of a tenth (a few times per burst, not per fire)
    if (leadMs > group.leadMs * 1.1) {
      this.queue.cancel(group.entry);
      group.leadMs = leadMs;
      group.entry = this.keyed(fireAt, leadMs);
    }
  }

  /** Takes `member` off its fire time; a no-op when it is not queued. */
  remove(member: Member): void {
    const group = this.memberOf.get(member);
    if (!group) return;
    this.memberOf.delete(member);
    group.members.delete(member);
    if (group.members.size === 0) this.close(group);
  }

  /** Takes every member off (stop()). */
  clear(): void {
    for (const group of this.groups.values()) this.queue.cancel(group.entry);
    this.groups.clear();
    this.memberOf.clear();
  }

  private keyed(fireAt: number, leadMs: number): QueueEntry {
    return this.queue.atWall(fireAt - leadMs, () => this.due(fireAt));
  }

  private close(group: FireTimeGroup<Member>): void {
    this.queue.cancel(group.entry);
    if (this.groups.get(group.fireAt) === group) this.groups.delete(group.fireAt);
  }

  /** The group's time came: each member leaves the group, then `onDue` is called for it. */
  private due(fireAt: number): void {
    const group = this.groups.get(fireAt);
    if (!group) return;
    this.groups.delete(fireAt);
    for (const member of group.members) {
      this.memberOf.delete(member);
      this.onDue(member);
    }
  }
}
