import type { AuditEntry } from '@fleetcron/core';
import { integerOption, type ParsedCommand } from '../args.js';
import type { Backend } from '../connect.js';
import { EXIT, type ExitCode } from '../exit-codes.js';
import type { CliIo } from '../io.js';
import { table } from '../table.js';

/** Longest note shown in the table (the whole note is in `--json`). */
const NOTE_SHOWN = 80;

/**
 * What an entry is about, as `key=value` pairs: the run request, the stored schedule and its
 * version. A stored schedule's `details` (handler, enabled, trigger) are in `--json` only; the
 * `details` of other actions (those added later) are shown as compact JSON.
 */
function detailsText(entry: AuditEntry): string {
  const parts: string[] = [];
  if (entry.requestId !== null) parts.push(`request=${entry.requestId}`);
  if (entry.schedule !== null) parts.push(`schedule=${entry.schedule}`);
  if (entry.version !== null) parts.push(`version=${entry.version}`);
  if (entry.details !== null && entry.schedule === null) parts.push(JSON.stringify(entry.details));
  return parts.join(' ');
}

/** The first line of a note, cut to {@link NOTE_SHOWN} characters. */
function noteText(note: string | null | undefined): string {
  if (!note) return '';
  const line = note.split('\n')[0] ?? '';
  const cut = line.length > NOTE_SHOWN ? `${line.slice(0, NOTE_SHOWN - 1)}…` : line;
  return cut === note ? cut : cut.endsWith('…') ? cut : `${cut} …`;
}

/**
 * `fleetcron audit [--job J] [--action A] [--limit N] [--cursor C] [--json]`: the store's audit
 * log (who paused, resumed, ran or changed what, when, and why), newest first; `more: --cursor`
 * on stderr when older entries exist. Every stored text goes through the CLI's terminal-safe
 * output (control and bidi characters printed as visible escapes).
 */
export async function auditCommand(
  backend: Backend,
  { options }: ParsedCommand,
  io: CliIo,
): Promise<ExitCode> {
  const page = await backend.fleet.audit({
    limit: integerOption('limit', options.limit, 20, 1000),
    cursor: options.cursor ?? null,
    ...(options.job === undefined ? {} : { job: options.job }),
    ...(options.action === undefined ? {} : { action: options.action as AuditEntry['action'] }),
  });
  if (options.json) {
    io.out(JSON.stringify(page, null, 2));
    return EXIT.ok;
  }
  if (page.entries.length === 0) {
    io.out('no audit entries');
    return EXIT.ok;
  }
  const rows = page.entries.map((e) => [
    new Date(e.at).toISOString(),
    e.by ?? '-',
    e.action,
    e.job ?? '-',
    detailsText(e),
    noteText(e.note),
  ]);
  io.out(table(['AT', 'BY', 'ACTION', 'JOB', 'DETAILS', 'NOTE'], rows));
  if (page.nextCursor) io.err(`more: --cursor ${page.nextCursor}`);
  return EXIT.ok;
}
