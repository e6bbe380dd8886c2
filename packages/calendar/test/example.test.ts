import { fileURLToPath } from 'node:url';
import { type CalendarSpec, calendarFromSpec } from '@fleetcron/core';
import { describe, expect, it } from 'vitest';
import { billingJob } from '../examples/holiday-aware-job.js';

describe('the README example (examples/holiday-aware-job.ts)', () => {
  it('excludes holidays, closures and maintenance nights, and publishes a spec core rebuilds', () => {
    const job = billingJob(
      fileURLToPath(new URL('./fixtures/company.ics', import.meta.url)),
      () => {},
    );
    const exclude = job.exclude;
    if (!exclude) throw new Error('the example job has no exclude');
    const fire = (iso: string) => exclude.excludedBy(Date.parse(iso), 'Europe/Berlin');
    expect(fire('2026-12-25T02:00:00Z')).toBe('holiday: Christmas Day');
    expect(fire('2026-12-24T02:00:00Z')).toBe('event: Company holidays');
    expect(fire('2026-12-05T02:00:00Z')).toBe('maintenance'); // Saturday 03:00 CET
    expect(fire('2026-12-08T02:00:00Z')).toBeNull(); // a Tuesday
    const rebuilt = calendarFromSpec(JSON.parse(JSON.stringify(exclude.spec)) as CalendarSpec);
    expect(rebuilt.excludedBy(Date.parse('2026-12-25T02:00:00Z'), 'Europe/Berlin')).toBe(
      'holiday: Christmas Day',
    );
  });
});
