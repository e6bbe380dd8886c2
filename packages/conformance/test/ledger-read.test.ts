import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Ledger, readLedger } from '../src/fleet/ledger.js';

describe('ledger reads', () => {
  it('reads complete lines only: a line being appended (no newline yet) is left for the next read', () => {
    const dir = mkdtempSync(join(tmpdir(), 'fleetcron-ledger-'));
    try {
      const path = join(dir, 'ledger.jsonl');
      const ledger = new Ledger(path);
      ledger.write({ kind: 'started', instance: 'a' } as never);
      ledger.write({ kind: 'started', instance: 'b' } as never);
      const whole = JSON.stringify({ kind: 'started', instance: 'c', mono: 1, wall: 1, pid: 1 });
      appendFileSync(path, whole.slice(0, 20)); // a write seen half done
      expect(readLedger(path).map((e) => e.instance)).toEqual(['a', 'b']);
      appendFileSync(path, `${whole.slice(20)}\n`); // the write completes
      expect(ledger.read().map((e) => e.instance)).toEqual(['a', 'b', 'c']);
      ledger.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
