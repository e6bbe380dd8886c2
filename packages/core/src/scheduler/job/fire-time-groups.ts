import type { QueueEntry, TimerQueue } from '../timing/index.js';

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
