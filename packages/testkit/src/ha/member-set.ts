import type { LocalProcess } from '../local-process.js';
import type { ServerDir } from '../temp-dir.js';

/** One server process of an HA topology: its name, process and temp dir. */
export interface Member {
  name: string;
  proc: LocalProcess;
  dir: ServerDir;
}

/** Lifecycle state of one member. */
export type MemberState = 'running' | 'paused' | 'stopped';

/**
 * The processes of one HA topology (etcd members, a primary and its standby, Redis nodes and
 * Sentinels), with the per-member faults the topologies share: kill, pause, resume, start, and a
 * close that kills them all and removes their dirs. Calls on one member are serialised.
 */
export class MemberSet {
  readonly #members: Member[];
  readonly #states: MemberState[];
  #queue: Promise<unknown> = Promise.resolve();
  #closed: Promise<void> | undefined;

  constructor(members: Member[] = []) {
    this.#members = [...members];
    this.#states = members.map(() => 'stopped');
  }

  /** Number of members. */
  get size(): number {
    return this.#members.length;
  }

  /** Adds a member (not started); returns its index. */
  add(member: Member): number {
    this.#members.push(member);
    this.#states.push('stopped');
    return this.#members.length - 1;
  }

  /** The member at `index`, or a RangeError naming the valid range. */
  member(index: number): Member {
    const member = this.#members[index];
    if (!member) {
      throw new RangeError(`member index ${index} is out of range 0..${this.#members.length - 1}`);
    }
    return member;
  }

  state(index: number): MemberState {
    this.member(index);
    return this.#states[index] as MemberState;
  }

  /** Indexes of the members running now (not paused, not stopped). */
  running(): number[] {
    return this.#states.flatMap((s, i) => (s === 'running' ? [i] : []));
  }

  /** Starts every member at once; on any failure kills them all, removes the dirs and throws. */
  async startAll(): Promise<void> {
    // At once, not one by one: an etcd member is ready only once a quorum of members runs.
    const results = await this.#serial(() =>
      Promise.allSettled(
        this.#members.map(async (member, i) => {
          await member.proc.start();
          this.#states[i] = 'running';
        }),
      ),
    );
    const failed = results.find((r) => r.status === 'rejected');
    if (failed) {
      await this.close().catch(() => {});
      throw (failed as PromiseRejectedResult).reason;
    }
  }

  /** Starts member `index` (again, with its data); no-op when it runs. */
  start(index: number): Promise<void> {
    return this.#serial(async () => {
      if (this.state(index) === 'running') return;
      if (this.state(index) === 'paused') {
        this.member(index).proc.resume();
      } else {
        await this.member(index).proc.start();
      }
      this.#states[index] = 'running';
    });
  }

  /** SIGKILL of member `index` (and its children); resolves when they are gone. */
  kill(index: number): Promise<void> {
    return this.#serial(async () => {
      await this.member(index).proc.kill();
      this.#states[index] = 'stopped';
    });
  }

  /** Clean stop of member `index` (its stop signal). */
  stop(index: number): Promise<void> {
    return this.#serial(async () => {
      await this.member(index).proc.stop(false);
      this.#states[index] = 'stopped';
    });
  }

  /** SIGSTOP of member `index`; resolves when every process of it is stopped. */
  pause(index: number): Promise<void> {
    return this.#serial(async () => {
      if (this.state(index) !== 'running') {
        throw new Error(`${this.member(index).name} is ${this.state(index)}, cannot pause it`);
      }
      await this.member(index).proc.pause();
      this.#states[index] = 'paused';
    });
  }

  /** SIGCONT of a paused member; no-op otherwise. */
  resume(index: number): Promise<void> {
    return this.#serial(async () => {
      if (this.state(index) !== 'paused') return;
      this.member(index).proc.resume();
      this.#states[index] = 'running';
    });
  }

  /** Kills every member (waiting until gone) and removes their dirs. Idempotent. */
  close(): Promise<void> {
    this.#closed ??= Promise.allSettled(
      this.#members.map(async (member, i) => {
        try {
          await member.proc.kill();
        } finally {
          member.dir.remove();
          this.#states[i] = 'stopped';
        }
      }),
    ).then((results) => {
      const failed = results.find((r) => r.status === 'rejected');
      if (failed) throw (failed as PromiseRejectedResult).reason;
    });
    return this.#closed;
  }

  #serial<T>(step: () => Promise<T>): Promise<T> {
    if (this.#closed) return Promise.reject(new Error('the topology was closed'));
    const next = this.#queue.then(step, step);
    this.#queue = next.catch(() => {});
    return next;
  }
}
