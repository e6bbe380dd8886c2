import { FleetClient, offsetClock, realClock } from '@fleetcron/core';
import { integerOption, type ParsedCommand } from '../args.js';
import type { Backend } from '../connect.js';
import { EXIT, type ExitCode } from '../exit-codes.js';
import type { CliIo } from '../io.js';
import { table } from '../table.js';
import { unknownJob } from '../unknown-job.js';
import { afterOf, MAX_COUNT } from './next.js';

/**
 * `fleetcron next --job NAME [-n COUNT] [--after ISO] [--json]`: the next fires of a fleet job as
 * its live instances define it (majority definition), excluded ones marked with the reason.
 */
export async function nextJobCommand(
  backend: Backend,
  { options }: ParsedCommand,
  io: CliIo,
): Promise<ExitCode> {
  const name = options.job as string;
  const count = integerOption('count', options.count, 10, MAX_COUNT);
  const after = afterOf(options.after).getTime();
  // the view as of --after: a client whose clock reads that time
  const client = new FleetClient({
    store: backend.store,
    clock: offsetClock(realClock, after - Date.now()),
    nextFireCount: count,
  });
  const view = await client.fleet();
  const job = view.jobs.find((j) => j.name === name);
  if (!job) return unknownJob(name, view, io);
  const zone = job.spec?.kind === 'cron' ? job.spec.tz : 'UTC';
  if (options.json) {
    io.out(
      JSON.stringify(
        { job: name, trigger: job.trigger, zone, exclude: job.exclude, fires: job.nextFires },
        null,
        2,
      ),
    );
    return EXIT.ok;
  }
  if (job.trigger === null) {
    io.err(`fleetcron: no live instance defines ${JSON.stringify(name)}; its fires are unknown`);
    return EXIT.ok;
  }
  if (job.spec === null) {
    io.err(
      `fleetcron: ${name} has a custom trigger (${job.trigger}); only its instances compute its fires`,
    );
    return EXIT.ok;
  }
  const rows = job.nextFires.map((fire, i) => [
    String(i + 1),
    fire.utc,
    fire.local,
    fire.excluded === undefined ? '' : `excluded: ${fire.excluded}`,
  ]);
  io.out(table(['#', 'UTC', zone, 'EXCLUDED'], rows));
  if (job.exclude && job.exclude.spec === null) {
    io.err(
      `note: ${name} excludes fires with a custom calendar (${job.exclude.description}); only its instances know which, none is marked here`,
    );
  }
  return EXIT.ok;
}
