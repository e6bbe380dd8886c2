/// <reference lib="dom" />
import type { ConsoleDom, Json } from './dom.js';

/** What the audit page needs from the console (see client.ts). */
export interface AuditContext {
  /** Calls the JSON API; an error answer throws `{ status, code, message, field? }`. */
  api(path: string, method?: string, body?: Json): Promise<Json>;
  /** Reloads what the open page shows (through `load`) and renders it. */
  refresh(): Promise<void>;
}

/** The audit page the URL hash names: `#/audit`, or `#/audit/<job>` filtered to one job. */
export type AuditRoute = { view: 'audit'; job: string } | { view: 'bad-link' };

/**
 * The console's audit page (runs in the browser; serialized with `toString()`, see client.ts):
 * `#/audit` lists the store's audit log newest first — when, who, what (the action and its
 * details: run request id, schedule id and version), the job and the note — with a job filter
 * (`#/audit/<job>` opens it filtered), an action filter and more pages. Every role that can sign
 * in sees it (reading the log changes nothing). Stored text goes through `bdi` and the console's
 * `visible`, so a note or a name can neither become markup nor reorder the page; long notes wrap.
 * Self-contained apart from its arguments.
 */
export function consoleAudit(dom: ConsoleDom, ctx: AuditContext) {
  type Json = Record<string, unknown>;
  const { h, bdi, time, cell, jobLink } = dom;
  const PAGE = 50;
  const ACTIONS = [
    'pause',
    'resume',
    'run',
    'schedule.create',
    'schedule.update',
    'schedule.enable',
    'schedule.disable',
    'schedule.remove',
  ];
  const state: {
    job: string;
    action: string;
    /** What is typed in the job filter (kept across re-renders until applied). */
    typed: string;
    pages: number;
    entries: Json[];
    next: string | null;
    /** Why the log cannot be shown (the store keeps none), or `null`. */
    unavailable: string | null;
  } = { job: '', action: '', typed: '', pages: 1, entries: [], next: null, unavailable: null };

  /** The audit page `hash` names, or `null` when it names another page. */
  function route(hash: string): AuditRoute | null {
    if (hash === '/audit') return { view: 'audit', job: '' };
    const match = /^\/audit\/(.+)$/.exec(hash);
    if (!match) return null;
    try {
      return { view: 'audit', job: decodeURIComponent(match[1] as string) };
    } catch {
      return { view: 'bad-link' };
    }
  }

  /** Loads as many pages of the log as were opened, with the filters of the page. */
  async function load(r: AuditRoute): Promise<void> {
    if (r.view === 'bad-link') return;
    if (r.job !== state.job) {
      state.job = r.job;
      state.typed = r.job;
      state.pages = 1;
    }
    const entries: Json[] = [];
    let cursor: string | null = null;
    try {
      for (let page = 0; page < state.pages; page++) {
        const query = new URLSearchParams({ limit: String(PAGE) });
        if (state.job) query.set('job', state.job);
        if (state.action) query.set('action', state.action);
        if (cursor) query.set('cursor', cursor);
        const answer = await ctx.api(`/audit?${query}`);
        entries.push(...((answer.entries as Json[] | undefined) ?? []));
        cursor = (answer.nextCursor as string | null) ?? null;
        if (!cursor) break;
      }
    } catch (error) {
      if ((error as { status?: number }).status !== 501) throw error;
      state.unavailable = (error as Error).message;
      state.entries = [];
      state.next = null;
      return;
    }
    state.unavailable = null;
    state.entries = entries;
    state.next = cursor;
  }

  /** Forgets the action filter and the pages opened when the user goes to another page. */
  function leave(): void {
    if (route(location.hash.replace(/^#/, '') || '/')) return; // still the audit page
    state.action = '';
    state.pages = 1;
  }

  /**
   * What the entry is about: the run request's id, the stored schedule (a link) and its version,
   * and the entry's `details` as short `key value` parts (a schedule's handler and enabled; the
   * trigger is on the schedule's page).
   */
  function details(entry: Json): Array<Node | string> {
    const parts: Array<Node | string> = [];
    const add = (...nodes: Array<Node | string>) => {
      if (parts.length > 0) parts.push(' · ');
      parts.push(...nodes);
    };
    if (typeof entry.requestId === 'string') {
      add(h('span', { class: 'muted' }, 'request '), h('code', null, bdi(entry.requestId)));
    }
    if (typeof entry.schedule === 'string') {
      const link = `#/schedules/${encodeURIComponent(entry.schedule)}`;
      add(h('span', { class: 'muted' }, 'schedule '), h('a', { href: link }, bdi(entry.schedule)));
    }
    if (typeof entry.version === 'number') add(`version ${entry.version}`);
    for (const [key, value] of Object.entries((entry.details ?? {}) as Json)) {
      if (value === null || value === undefined || key === 'trigger') continue;
      add(
        h('span', { class: 'muted' }, `${key} `),
        h('code', null, bdi(typeof value === 'string' ? value : JSON.stringify(value))),
      );
    }
    return parts;
  }

  function toolbar(): HTMLElement {
    const filter = h('input', {
      id: 'audit-job-filter',
      name: 'job',
      type: 'search',
      value: state.typed,
      placeholder: 'job',
      'aria-label': 'Only entries of job',
      oninput: (event: Event) => {
        state.typed = (event.target as HTMLInputElement).value;
      },
    }) as HTMLInputElement;
    const action = h(
      'select',
      { id: 'audit-action-filter', name: 'action', 'aria-label': 'Only entries of action' },
      h('option', { value: '' }, 'every action'),
      ...ACTIONS.map((a) => h('option', { value: a, selected: a === state.action }, a)),
    ) as HTMLSelectElement;
    return h(
      'form',
      {
        class: 'toolbar actions',
        onsubmit: async (event: Event) => {
          event.preventDefault();
          state.action = action.value;
          state.pages = 1;
          const job = filter.value.trim();
          const hash = job ? `#/audit/${encodeURIComponent(job)}` : '#/audit';
          if (location.hash !== hash)
            location.hash = hash; // hashchange loads it
          else await ctx.refresh();
        },
      },
      filter,
      action,
      h('button', { type: 'submit', id: 'audit-filter' }, 'Filter'),
    );
  }

  function listView(now: number): HTMLElement {
    const rows = state.entries.map((e) =>
      h(
        'tr',
        { 'data-audit': String(e.id), 'data-action': String(e.action) },
        cell('When', time(e.at as number, now)),
        cell('Who', bdi(String(e.by))),
        cell('Action', h('code', null, String(e.action))),
        cell(
          'Job',
          typeof e.job === 'string' ? jobLink(e.job) : h('span', { class: 'muted' }, '—'),
        ),
        cell('Details', ...details(e)),
        cell(
          'Note',
          typeof e.note === 'string' && e.note !== ''
            ? h('span', { class: 'audit-note' }, bdi(e.note))
            : h('span', { class: 'muted' }, '—'),
        ),
      ),
    );
    const filtered = [state.job ? `job "${state.job}"` : '', state.action]
      .filter(Boolean)
      .join(', ');
    return h(
      'section',
      null,
      h('h1', null, state.job ? 'Audit of ' : 'Audit', state.job ? bdi(state.job) : null),
      toolbar(),
      state.unavailable
        ? h('p', { class: 'warning', role: 'alert', id: 'audit-unavailable' }, state.unavailable)
        : rows.length === 0
          ? h(
              'p',
              { class: 'muted', id: 'audit-empty' },
              filtered ? `No audit entry of ${filtered}.` : 'No audit entries yet.',
            )
          : h(
              'table',
              { class: 'table', id: 'audit' },
              h(
                'thead',
                null,
                h(
                  'tr',
                  null,
                  ...['When', 'Who', 'Action', 'Job', 'Details', 'Note'].map((t) =>
                    h('th', { scope: 'col' }, t),
                  ),
                ),
              ),
              h('tbody', null, ...rows),
            ),
      state.next
        ? h(
            'button',
            {
              type: 'button',
              id: 'more-audit',
              onclick: async () => {
                state.pages++;
                await ctx.refresh();
              },
            },
            'Older entries',
          )
        : null,
    );
  }

  /** The page for `r` (`null` for a malformed link: the console's own error page shows). */
  function view(r: AuditRoute, now: number): HTMLElement | null {
    return r.view === 'audit' ? listView(now) : null;
  }

  return { route, load, leave, view };
}

/** What {@link consoleAudit} returns. */
export type ConsoleAudit = ReturnType<typeof consoleAudit>;
