import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { LedgerLine } from './fleet.js';

/** Whether a parsed ledger line has the fields of the scale scenario's {@link LedgerLine}. */
const isScaleLine = (line: unknown): line is LedgerLine =>
  Number.isInteger((line as LedgerLine).job) && Number.isFinite((line as LedgerLine).latenessMs);

/**
 * Parses ledger text (one JSON run per line, as the instances append them). A torn last line
 * (an instance killed mid-write) is reported, never silently dropped. `isLine` says what a
 * whole line is (default: the scale scenario's {@link LedgerLine}).
 */
export function parseLedger<T = LedgerLine>(
  text: string,
  isLine: (line: unknown) => line is T = isScaleLine as (line: unknown) => line is T,
): { lines: T[]; torn: number } {
  const lines: T[] = [];
  let torn = 0;
  for (const raw of text.split('\n')) {
    if (raw.trim() === '') continue;
    try {
      const line: unknown = JSON.parse(raw);
      if (isLine(line)) lines.push(line);
      else torn++;
    } catch {
      torn++;
    }
  }
  return { lines, torn };
}

/**
 * Reads every ledger file of the cell `prefix` in `dir` (one per instance: `<prefix>-i….ndjson`),
 * each line checked by `isLine` as in {@link parseLedger}.
 */
export async function readLedger<T = LedgerLine>(
  dir: string,
  prefix: string,
  isLine?: (line: unknown) => line is T,
): Promise<{ lines: T[]; torn: number; files: number }> {
  const names = (await readdir(dir)).filter(
    (n) => n.startsWith(`${prefix}-i`) && n.endsWith('.ndjson'),
  );
  const out = { lines: [] as T[], torn: 0, files: names.length };
  for (const name of names) {
    const { lines, torn } = parseLedger<T>(await readFile(join(dir, name), 'utf8'), isLine);
    for (const line of lines) out.lines.push(line);
    out.torn += torn;
  }
  return out;
}
