/// <reference lib="dom" />

/** Fleet data as the JSON API returns it (the console reads it defensively). */
export type Json = Record<string, unknown>;

/**
 * The console's rendering helpers (runs in the browser; serialized with `toString()`, see
 * client.ts): element creation, times, badges and table cells. Self-contained: no imports, no
 * references outside this function.
 */
export function consoleDom() {
  type Json = Record<string, unknown>;

  /**
   * Bidirectional-text controls (U+061C, U+200E/F, U+202A–E, U+2066–9) and other controls. A job
   * name or error with an override inside shows as something else (`invoice-\u202Eexe.fdp` as
   * "invoice-pdf.exe"), and isolation cannot undo an override inside the isolated text itself.
   */
  const HIDDEN = /[\p{Cc}\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/gu;

  /**
   * Text as it may be shown: each bidi or control character becomes a visible `⟨U+202E⟩`
   * (newlines and tabs stay). Every text node the console creates goes through it.
   */
  function visible(text: string): string {
    return text.replace(HIDDEN, (c) =>
      c === '\n' || c === '\t'
        ? c
        : `⟨U+${(c.codePointAt(0) as number).toString(16).toUpperCase().padStart(4, '0')}⟩`,
    );
  }

  /**
   * Stored text (a job name, who asked, an instance id) in a `<bdi>`: a right-to-left name is
   * laid out on its own and never reorders the words around it.
   */
  function bdi(text: unknown): HTMLElement {
    return h('bdi', null, String(text));
  }

  /** Creates an element; `attrs` keys starting with `on` are listeners. */
  function h(
    tag: string,
    attrs: Record<string, unknown> | null,
    ...children: Array<Node | string | null | undefined | false>
  ): HTMLElement {
    const el = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs ?? {})) {
      if (value === undefined || value === null || value === false) continue;
      if (key.startsWith('on') && typeof value === 'function') {
        el.addEventListener(key.slice(2), value as EventListener);
      } else if (key === 'class') el.className = String(value);
      else el.setAttribute(key, value === true ? '' : String(value));
    }
    for (const child of children) {
      if (child === null || child === undefined || child === false) continue;
      el.append(typeof child === 'string' ? document.createTextNode(visible(child)) : child);
    }
    return el;
  }

  function relative(at: number, now: number): string {
    const diff = at - now;
    const abs = Math.abs(diff);
    const units: Array<[number, string]> = [
      [86_400_000, 'd'],
      [3_600_000, 'h'],
      [60_000, 'min'],
      [1000, 's'],
    ];
    let text = 'now';
    for (const [ms, unit] of units) {
      if (abs >= ms) {
        text = `${Math.round(abs / ms)} ${unit}`;
        break;
      }
    }
    if (text === 'now') return text;
    return diff >= 0 ? `in ${text}` : `${text} ago`;
  }

  function localTime(at: number): string {
    return new Date(at).toLocaleString(undefined, {
      dateStyle: 'medium',
      timeStyle: 'medium',
    });
  }

  function time(at: number | null | undefined, now: number): Node {
    if (typeof at !== 'number') return document.createTextNode('—');
    return h(
      'time',
      { datetime: new Date(at).toISOString(), title: new Date(at).toISOString() },
      h('span', { class: 'rel' }, relative(at, now)),
      h('span', { class: 'abs' }, localTime(at)),
    );
  }

  function badge(text: string, kind: string): HTMLElement {
    return h('span', { class: `badge badge-${kind}` }, text);
  }

  function statusBadge(status: unknown): HTMLElement {
    if (typeof status !== 'string') return badge('never ran', 'none');
    return badge(status.replace('_', ' '), status);
  }

  /** How many live instances define the job (0: only its stored state is known). */
  function definedBy(job: Json): number {
    return ((job.definedBy as unknown[] | undefined) ?? []).length;
  }

  function jobLink(name: string): HTMLElement {
    return h('a', { href: `#/jobs/${encodeURIComponent(name)}` }, bdi(name));
  }

  function cell(label: string, ...children: Array<Node | string | null>): HTMLElement {
    return h('td', { 'data-label': label }, h('div', { class: 'cell' }, ...children));
  }

  /**
   * Relative time, the wall-clock time in the job's zone, and a note when the fire is excluded by
   * the job's calendar or will be skipped (paused).
   */
  function nextFireCell(job: Json, now: number): HTMLElement {
    const first = ((job.nextFires as Json[] | undefined) ?? [])[0];
    if (!first || typeof first.at !== 'number') return h('span', { class: 'muted' }, '—');
    return h(
      'div',
      { class: 'next-fire' },
      h(
        'time',
        { datetime: String(first.utc), title: String(first.utc) },
        h('span', { class: 'rel' }, relative(first.at, now)),
        h('span', { class: 'abs' }, `${String(first.local)} ${String(first.zone)}`),
      ),
      typeof first.excluded === 'string'
        ? h('span', { class: 'excluded-note' }, `excluded: ${first.excluded}`)
        : null,
      job.paused ? h('span', { class: 'skip-note' }, 'will be skipped (paused)') : null,
    );
  }

  return {
    h,
    visible,
    bdi,
    relative,
    localTime,
    time,
    badge,
    statusBadge,
    definedBy,
    jobLink,
    cell,
    nextFireCell,
  };
}

/** What {@link consoleDom} returns. */
export type ConsoleDom = ReturnType<typeof consoleDom>;
