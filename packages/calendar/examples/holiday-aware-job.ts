import { readFileSync } from 'node:fs';
import { icsCalendar, publicHolidays } from '@fleetcron/calendar';
import { anyOf, cron, exclusions, type JobDefinition } from '@fleetcron/core';

/**
 * A nightly billing job that does not run on Bavarian public holidays, during the company's
 * closures listed in an .ics file, nor on Friday and Saturday nights (maintenance).
 */
export function billingJob(icsPath: string, run: JobDefinition['run']): JobDefinition {
  const horizon = { from: '2026-01-01', to: '2027-12-31' }; // rebuilt at each deploy
  return {
    name: 'billing',
    trigger: cron('0 3 * * *', { tz: 'Europe/Berlin' }),
    exclude: anyOf(
      publicHolidays({ country: 'DE', state: 'BY', ...horizon }),
      icsCalendar(readFileSync(icsPath, 'utf8'), horizon),
      exclusions({
        weekly: [{ days: ['fri', 'sat'], from: '22:00', to: '06:00', reason: 'maintenance' }],
      }),
    ),
    run,
  };
}
