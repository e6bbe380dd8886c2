import {
  type InstanceRecord,
  type JobState,
  type LiveInstance,
  MemoryStore,
  type PauseOptions,
  type RunRequest,
  type RunRequestInput,
} from '@fleetcron/core';

/** (f1) Takes run requests in two steps (read, then delete): concurrent takers both get them. */
export class TakesTwice extends MemoryStore {
  private readonly pending: RunRequest[] = [];

  override async requestRun(input: RunRequestInput): Promise<RunRequest> {
    const request = await super.requestRun(input);
    await super.takeRunRequests([input.job], 'mutant');
    this.pending.push(request);
    return request;
  }

  override async takeRunRequests(jobs: readonly string[]): Promise<RunRequest[]> {
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
