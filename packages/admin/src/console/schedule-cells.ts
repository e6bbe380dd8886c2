/// <reference lib="dom" />
import type { ConsoleDom } from './dom.js';

/**
 * How the console shows a stored schedule's facts, in the list and on its page (runs in the
 * browser; serialized with `toString()`, see client.ts): its trigger in one line, its badges,
 * the instances serving it, and its last change. Self-contained apart from its argument.
 */
export function consoleScheduleCells(dom: ConsoleDom) {
  type Json = Record<string, unknown>;
  const { h, bdi, badge, time } = dom;

  /** `cron 0 3 * * * (Europe/Berlin)`, `every 60000 ms`, `at 2027-01-01T00:00:00.000Z`. */
  function describe(spec: Json | undefined): string {
    if (!spec) return '—';
    if (spec.kind === 'cron') return `cron ${String(spec.expression)} (${String(spec.tz)})`;
    if (spec.kind === 'every') return `every ${String(spec.ms)} ms`;
    return `at ${new Date(Number(spec.at)).toISOString()}`;
  }

  function statusBadges(s: Json): Array<HTMLElement | null> {
    return [
      s.enabled ? badge('enabled', 'active') : badge('disabled', 'paused'),
      s.unserved ? badge('unserved', 'failed') : null,
    ];
  }

  function servedBy(s: Json): HTMLElement {
    const ids = (s.servedBy as unknown[] | undefined) ?? [];
    if (ids.length === 0) {
      return s.enabled
        ? h('span', { class: 'error-text' }, 'unserved: no live instance has its handler')
        : h('span', { class: 'muted' }, '— (disabled)');
    }
    return h(
      'span',
      { class: 'served-by' },
      ...ids.flatMap((id, i) => [i === 0 ? '' : ', ', h('code', null, bdi(id))]),
    );
  }

  /** When, relative and absolute, and by whom (`admin:ops`, `cli:bob`). */
  function lastChange(s: Json, now: number): HTMLElement {
    return h(
      'span',
      { class: 'last-change' },
      time(s.updatedAt as number, now),
      h('span', { class: 'by' }, 'by ', bdi(s.updatedBy)),
    );
  }

  return { describe, statusBadges, servedBy, lastChange };
}

/** What {@link consoleScheduleCells} returns. */
export type ConsoleScheduleCells = ReturnType<typeof consoleScheduleCells>;
