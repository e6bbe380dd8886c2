import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/fake-clock.js';
import { FleetClient } from '../../src/fleet/fleet-client.js';
import { MemoryStore } from '../../src/memory-store.js';

const START = Date.UTC(2026, 0, 1);

/** A store with fleet control and a live instance defining `billing`. */
async function fleetWith(store: MemoryStore): Promise<FleetClient> {
  await store.heartbeat({
    ...{ instanceId: 'i-1', host: 'h', pid: 1, version: 'test', startedAt: START },
    ...{ heartbeatMs: 60_000, clock: null },
    jobs: [
      {
        ...{ name: 'billing', trigger: 'every 1h', spec: null, definitionHash: 'x' },
        ...{ leaseMs: 30_000, overlap: 'skip', catchUp: 'skip' },
      },
    ],
  });
  return new FleetClient({ store });
}

describe('FleetClient and the audit log', () => {
  it('records pause, resume, run and schedule changes with by and note; audit() pages them', async () => {
    const clock = new FakeClock(START);
    const client = await fleetWith(new MemoryStore({ clock }));
    expect(client.keepsAudit).toBe(true);
    await client.pause('billing', { by: 'alice', note: 'incident 7' });
    await clock.advance(1_000);
    await client.resume('billing', { by: 'bob' });
    const request = await client.requestRun('billing', { by: 'carol', note: 'rerun' });
    const created = await client.createSchedule(
      { id: 'acme', handler: 'report', trigger: { kind: 'every', ms: 60_000 } },
      { by: 'dave', note: 'new' },
    );
    await client.disableSchedule('acme', { by: 'erin', note: 'holiday' });
    await client.enableSchedule('acme', { by: 'erin' });
    await client.updateSchedule('acme', { data: { x: 1 } }, { by: 'frank', expectedVersion: 3 });
    await client.removeSchedule('acme', { by: 'grace' });
    const page = await client.audit({ limit: 5 });
    expect(page.entries.map((e) => [e.action, e.by, e.note, e.version])).toEqual([
      ['schedule.remove', 'grace', null, 4],
      ['schedule.update', 'frank', null, 4],
      ['schedule.enable', 'erin', null, 3],
      ['schedule.disable', 'erin', 'holiday', 2],
      ['schedule.create', 'dave', 'new', created.version],
    ]);
    const rest = await client.audit({ limit: 5, cursor: page.nextCursor });
    expect(rest.entries.map((e) => [e.action, e.by, e.note, e.at])).toEqual([
      ['run', 'carol', 'rerun', START + 1_000],
      ['resume', 'bob', null, START + 1_000],
      ['pause', 'alice', 'incident 7', START],
    ]);
    expect(rest.entries[0]!.requestId).toBe(request.id);
    expect(rest.nextCursor).toBeNull();
  });

  it('refuses a note over 1,000 characters, an ESC in it, or a bidi control in by, and records nothing', async () => {
    const store = new MemoryStore();
    const client = await fleetWith(store);
    const attempts: [string, () => Promise<unknown>][] = [
      ['note', () => client.pause('billing', { by: 'a', note: 'x'.repeat(1_001) })],
      ['note', () => client.requestRun('billing', { by: 'a', note: 'a\u001b[2J' })],
      ['by', () => client.resume('billing', { by: 'invoice-\u202Eexe.fdp' })],
      ['by', () => client.pause('billing', { by: 'a'.repeat(201) })],
      [
        'note',
        () =>
          client.createSchedule(
            { handler: 'h', trigger: { kind: 'every', ms: 60_000 } },
            { by: 'a', note: 'x'.repeat(1_001) },
          ),
      ],
    ];
    for (const [field, attempt] of attempts) {
      await expect(attempt(), field).rejects.toMatchObject({ code: 'INVALID_OPTION', field });
    }
    expect((await client.audit()).entries).toEqual([]);
    expect((await store.getJobState('billing')).paused).toBe(false);
    await client.pause('billing', { by: 'a', note: 'line one\r\nline two\tend' });
    expect((await client.audit()).entries[0]!.note).toBe('line one\r\nline two\tend');
  });

  it('says clearly when the store keeps no audit log: keepsAudit false, audit() AUDIT_NOT_KEPT', async () => {
    class NoAudit extends MemoryStore {}
    Object.defineProperty(NoAudit.prototype, 'listAudit', { value: undefined });
    const client = await fleetWith(new NoAudit());
    expect(client.keepsAudit).toBe(false);
    await expect(client.audit()).rejects.toMatchObject({
      code: 'AUDIT_NOT_KEPT',
      message: expect.stringMatching(/keeps no audit log/),
    });
    await client.pause('billing', { by: 'alice', note: 'still works' });
  });
});
