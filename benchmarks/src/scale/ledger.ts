import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { LedgerLine } from './fleet.js';

/**
 * Parses ledger text (one JSON run per line, as the instances append them). A torn last line
 * (an instance killed mid-write) is reported, never silently dropped.
 */
export function parseLedger(text: string): { lines: LedgerLine[]; torn: number } {
  const lines: LedgerLine[] = [];
  let torn = 0;
  for (const raw of text.split('\n')) {
    if (raw.trim() === '') continue;
    try {
      const line = JSON.parse(raw) as LedgerLine;
      if (Number.isInteger(line.job) && Number.isFinite(line.latenessMs)) lines.push(line);
      else torn++;
    } catch {
      torn++;
    }
  }
  return { lines, torn };
}

/** Reads every ledger file of the cell `prefix` in `dir` (one per instance). */
export async function readLedger(
  dir: string,
  prefix: string,
): Promise<{ lines: LedgerLine[]; torn: number; files: number }> {
  const names = (await readdir(dir)).filter(
    (n) => n.startsWith(`${prefix}-i`) && n.endsWith('.ndjson'),
  );
  const out = { lines: [] as LedgerLine[], torn: 0, files: names.length };
  for (const name of names) {
    const { lines, torn } = parseLedger(await readFile(join(dir, name), 'utf8'));
    for (const line of lines) out.lines.push(line);
    out.torn += torn;
  }
  return out;
}
