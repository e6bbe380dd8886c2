/** The restart scenario's report: one table row per fire time of each run, then its findings. */
import { int, ms } from '../report/format.js';
import type { RestartRow } from './run.js';

/** Markdown of `rows`: per backend, each judged fire time, memory, claim answers, violations. */
export function renderRestart(rows: readonly RestartRow[], heading: string): string {
  const out = [`# ${heading}`, ''];
  for (const row of rows) {
    out.push(
      `## ${row.backend}: ${int(row.jobs)} jobs × ${row.instances} processes, store ${row.withStore ? 'on' : 'off'}, catchUp ${row.catchUp}`,
      '',
    );
    if (row.failure) {
      out.push(`failed: ${row.failure}`, '');
      continue;
    }
    out.push(
      '| fire | phase | runs | jobs ran | lost | duplicates | lateness p50 (ms) | p99 | max |',
      '| --- | --- | --: | --: | --: | --: | --: | --: | --: |',
    );
    for (const fire of row.verdict?.fires ?? []) {
      const l = fire.lateness;
      const time = new Date(fire.fireAt).toISOString().slice(11, 19);
      out.push(
        `| ${time} | ${fire.phase} | ${int(fire.runs)} | ${int(fire.ran)} | ${int(fire.lost)} | ${int(fire.duplicates)} | ${ms(l.p50)} | ${ms(l.p99)} | ${ms(l.max)} |`,
      );
    }
    const memory = row.memory
      .map((m) => `${m.startMb.toFixed(0)} → ${m.endMb.toFixed(0)} (peak ${m.peakMb.toFixed(0)})`)
      .join(', ');
    const events = Object.entries(row.events)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([name, n]) => `${name} ${int(n)}`)
      .join(', ');
    out.push(
      '',
      `- restarted fleet up (jobs added, started) ${ms(row.restartedInMs)} ms after the restart`,
      `- RSS per process, MB, after start → at the end (peak; under tsx): ${memory}`,
      `- claim answers and skips after the restart: ${events || 'none'}`,
      `- torn ledger lines: ${row.torn}`,
      `- verdict: ${row.violations.length === 0 ? 'every fire accounted for' : row.violations.join('; ')}`,
      '',
    );
  }
  return out.join('\n');
}

/** One line per run for the console. */
export function restartSummary(row: RestartRow): string {
  if (row.failure) return `${row.backend}: ${row.failure}`;
  const after = row.verdict?.fires.filter((f) => f.phase === 'after') ?? [];
  const fires = after
    .map(
      (f) =>
        `ran ${int(f.ran)}/${int(f.ran + f.lost)} dup ${f.duplicates} p99 ${ms(f.lateness.p99)}`,
    )
    .join(' | ');
  const verdict = row.violations.length === 0 ? 'ok' : `${row.violations.length} violation(s)`;
  return `${row.backend}: after restart ${fires}; ${verdict}`;
}
