import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { moveAcmeToFour, serveReports } from '../../examples/stored-schedules.js';
import { FakeClock, MemoryLock, MemoryStore, Scheduler } from '../../src/index.js';
import { settle } from '../scheduler/helpers.js';

describe('the stored-schedules guide example (examples/stored-schedules.ts)', () => {
  it('is quoted in docs/guides/stored-schedules.md as it is in the file', () => {
    const read = (path: string) => readFileSync(new URL(path, import.meta.url), 'utf8');
    const example = read('../../examples/stored-schedules.ts').split('\n').slice(1).join('\n');
    expect(read('../../../../docs/guides/stored-schedules.md')).toContain(
      `\`\`\`ts\n${example}\`\`\``,
    );
  });

  it('serves acme at 04:00 Berlin after the edit, with its data, once', async () => {
    const clock = new FakeClock(Date.parse('2026-06-01T00:00:00Z')); // 02:00 in Berlin (CEST)
    const store = new MemoryStore({ clock });
    const scheduler = new Scheduler({ lock: new MemoryLock({ clock }), store, clock });
    const sent: Array<{ at: string; data: unknown }> = [];
    const server = await serveReports(scheduler, store, async (data) => {
      sent.push({ at: new Date(clock.now()).toISOString(), data });
    });
    const edited = await moveAcmeToFour(store);
    expect(edited).toMatchObject({ version: 2, createdBy: 'alice', updatedBy: 'bob' });
    await settle(clock);
    await clock.advanceTo(Date.parse('2026-06-01T02:30:00Z')); // 04:30 in Berlin
    expect(sent).toEqual([{ at: '2026-06-01T02:00:00.000Z', data: { customer: 'acme' } }]);
    await server.stop();
    const stopping = scheduler.stop();
    await clock.advance(1_000);
    await stopping;
  });
});
