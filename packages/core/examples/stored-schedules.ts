// The README's "Schedules as data" example (checked by test/schedules/readme-example.test.ts).
import { FleetClient, type Scheduler, ScheduleServer, type Store } from '@fleetcron/core';

/** What the example's handler does with a schedule's data (your code). */
export type SendReport = (data: unknown, options: { signal: AbortSignal }) => Promise<void>;

/** Every instance: serves the stored schedules of the handlers it registers. */
export async function serveReports(scheduler: Scheduler, store: Store, sendReport: SendReport) {
  const server = new ScheduleServer({
    scheduler,
    store, // any built-in store: each keeps the schedules
    handlers: {
      'reports.daily': {
        // ctx.schedule = { id, data, version }
        run: (ctx) => sendReport(ctx.schedule.data, { signal: ctx.signal }),
        defaults: { retry: { attempts: 3 }, timeoutMs: 60_000 },
      },
    },
  });
  await server.start(); // loads the schedules first, so catch-up runs at the scheduler's start
  scheduler.start();
  return server;
}

/** Anywhere (admin tool, CLI, console): every change versioned, with who and when. */
export async function moveAcmeToFour(store: Store) {
  const fleet = new FleetClient({ store });
  const s = await fleet.createSchedule(
    {
      id: 'acme/daily',
      handler: 'reports.daily',
      trigger: { kind: 'cron', expression: '0 3 * * *', tz: 'Europe/Berlin' },
      data: { customer: 'acme' },
    },
    { by: 'alice' },
  );
  return fleet.updateSchedule(
    'acme/daily',
    { trigger: { kind: 'cron', expression: '0 4 * * *', tz: 'Europe/Berlin' } },
    { by: 'bob', expectedVersion: s.version }, // a stale version: SCHEDULE_CONFLICT, nothing written
  );
}
