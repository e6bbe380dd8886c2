import type { RedisClient, RedisCommands } from '@fleetcron/redis-shared';

/** How often (ms) a store re-adds a job it has already registered, in case the set was lost. */
const REFRESH_MS = 60_000;

/**
 * The set of job names a store has written (`{prefix}:jobs`), which `prune()` and `listJobs()`
 * walk. A separate key (another cluster slot than the jobs' own), so it is written beside the
 * record script, not inside it; each process re-adds a job at most once a minute.
 */
export class JobRegistry {
  /** Jobs this store has added, with when (ms, this host's clock). */
  private readonly added = new Map<string, number>();

  constructor(
    private readonly redis: RedisClient,
    private readonly commands: RedisCommands,
    private readonly key: string,
  ) {}

  /** Adds `job`, unless this process added it in the last minute. */
  async add(job: string): Promise<void> {
    await this.addMany([job]);
  }

  /** Adds the `jobs` not added in the last minute, in one `SADD`. */
  async addMany(jobs: readonly string[]): Promise<void> {
    const now = Date.now();
    const due = jobs.filter((job) => {
      const at = this.added.get(job);
      return at === undefined || now - at >= REFRESH_MS;
    });
    if (due.length === 0) return;
    await this.redis.sadd(this.key, ...due);
    for (const job of due) this.added.set(job, now);
  }

  /** Every registered job, in `SSCAN` batches of about 200 (each call bounded, named `operation`). */
  async *jobs(operation: string): AsyncGenerator<string[]> {
    let cursor = '0';
    do {
      const [next, batch] = await this.commands.call(operation, () =>
        this.redis.sscan(this.key, cursor, 'COUNT', 200),
      );
      cursor = next;
      yield batch;
    } while (cursor !== '0');
  }
}
