import { readFileSync } from 'node:fs';
import { describe, expect, it, vi } from 'vitest';
import { auditTheExport } from '../../examples/audit-log.js';
import { FakeClock, MemoryStore } from '../../src/index.js';

const START = Date.UTC(2026, 0, 1);

describe('the audit-log guide example (examples/audit-log.ts)', () => {
  it('is quoted in docs/guides/audit.md as it is in the file', () => {
    const read = (path: string) => readFileSync(new URL(path, import.meta.url), 'utf8');
    const example = read('../../examples/audit-log.ts').split('\n').slice(1).join('\n');
    expect(read('../../../../docs/guides/audit.md')).toContain(`\`\`\`ts\n${example}\`\`\``);
  });

  it('records the pause and the run with who and why, read back newest first over two pages', async () => {
    const store = new MemoryStore({ clock: new FakeClock(START) });
    await store.heartbeat({
      ...{ instanceId: 'i-1', host: 'h', pid: 1, version: 'test', startedAt: START },
      ...{ heartbeatMs: 60_000, clock: null },
      jobs: [
        {
          ...{ name: 'export', trigger: 'daily', spec: null, definitionHash: 'x' },
          ...{ leaseMs: 30_000, overlap: 'skip', catchUp: 'skip' },
        },
      ],
    });
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    try {
      const entries = await auditTheExport(store);
      expect(entries.map((e) => [e.action, e.by, e.note])).toEqual([
        ['run', 'bob', 'rerun after the fix'],
        ['pause', 'alice', 'INC-42: the warehouse is down'],
      ]);
      expect(log).toHaveBeenCalledTimes(2);
      expect(log.mock.calls[1]).toEqual([
        '2026-01-01T00:00:00.000Z',
        'alice',
        'pause',
        'INC-42: the warehouse is down',
      ]);
    } finally {
      log.mockRestore();
    }
  });
});
