import {
  type InstanceRecord,
  type JobState,
  type LiveInstance,
  MemoryStore,
  type PauseOptions,
  type RunRequest,
  type RunRequestDecision,
  type RunRequestInput,
  type TakenRunRequest,
  type TakeRunRequestsOptions,
} from '@fleetcron/core';

/** (f1) Takes run requests in two steps (read, then delete): concurrent takers both get them. */
export class TakesTwice extends MemoryStore {
  private readonly pending: TakenRunRequest[] = [];

  override async requestRun(input: RunRequestInput): Promise<RunRequest> {
    const request = await super.requestRun(input);
    this.pending.push(...(await super.takeRunRequests([input.job], 'mutant')));
    return request;
  }

  override async takeRunRequests(jobs: readonly string[]): Promise<TakenRunRequest[]> {
    const found = this.pending.filter((r) => jobs.includes(r.job));
    await new Promise((resolve) => setTimeout(resolve, 1));
    for (const r of found) {
      const at = this.pending.indexOf(r);
      if (at >= 0) this.pending.splice(at, 1);
    }
    return found;
  }
}

/** (f2) Never expires instances: lists every record ever heartbeated. */
export class NeverExpires extends MemoryStore {
  private readonly all = new Map<string, LiveInstance>();

  override async heartbeat(instance: InstanceRecord): Promise<void> {
    this.all.set(instance.instanceId, { ...instance, lastSeenAt: Date.now() });
  }

  override async instances(): Promise<LiveInstance[]> {
    return [...this.all.values()].sort((a, b) => (a.instanceId < b.instanceId ? -1 : 1));
  }

  override async leave(instanceId: string): Promise<void> {
    this.all.delete(instanceId);
  }
}

/** (f3) Forgets who paused: `by` is dropped. */
export class ForgetsPausedBy extends MemoryStore {
  override async setPaused(job: string, paused: boolean, _options?: PauseOptions): Promise<void> {
    await super.setPaused(job, paused);
  }
}

/** (f4) Lists only jobs with an outcome: a job paused from outside is missing from listJobs. */
export class ListsOnlyRunJobs extends MemoryStore {
  override async listJobs(): Promise<JobState[]> {
    return (await super.listJobs()).filter((j) => j.lastStatus !== null);
  }
}

/** A memory store's kept request, as the mutants below reach into it. */
interface KeptRequest {
  request: { id: string };
  takeId: string | null;
  takenUntil: number | null;
  decidedAt: number | null;
  fireAt: number | null;
  decidedBy: string | null;
}

function kept(store: MemoryStore): KeptRequest[] {
  return (store as unknown as { requests: KeptRequest[] }).requests;
}

/**
 * (f5) Decides for any take: the take token is not compared. Its answer comes 2 ms late, as
 * over a network, so racing takes meet.
 */
export class DecidesAnyTake extends MemoryStore {
  override async decideRunRequest(
    id: string,
    _takeId: string,
    decision: RunRequestDecision,
  ): Promise<boolean> {
    await new Promise((resolve) => setTimeout(resolve, 2));
    const stored = kept(this).find((r) => r.request.id === id);
    if (!stored) return false;
    if (stored.decidedAt === null) {
      stored.decidedAt = Date.now();
      stored.fireAt = decision.fireAt;
      stored.decidedBy = decision.instanceId;
    }
    return true;
  }
}

/** (f6) Takes held requests again: the take's lease is not honoured. */
export class TakesHeldRequests extends MemoryStore {
  override async takeRunRequests(
    jobs: readonly string[],
    instanceId: string,
    options?: TakeRunRequestsOptions,
  ): Promise<TakenRunRequest[]> {
    for (const r of kept(this)) r.takenUntil = null;
    return super.takeRunRequests(jobs, instanceId, options);
  }
}

/** (f7) Forgets which take decided: a retried decision (lost reply) is answered false. */
export class ForgetsDecider extends MemoryStore {
  override async decideRunRequest(
    id: string,
    takeId: string,
    decision: RunRequestDecision,
  ): Promise<boolean> {
    const state = await this.getRunRequest(id);
    if (state?.state === 'decided') return false;
    return super.decideRunRequest(id, takeId, decision);
  }
}
