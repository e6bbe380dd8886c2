/// <reference lib="dom" />
import type { ConsoleDom, Json } from './dom.js';
import type { ConsoleScheduleCells } from './schedule-cells.js';
import type { ConsoleScheduleForm, ScheduleFormHandle } from './schedule-form.js';

/** What the schedules pages need from the console (see client.ts). */
export interface SchedulesContext {
  /** `'write'` or `'read'`: the read role sees no buttons and no form. */
  role(): string | null;
  /** Calls the JSON API; an error answer throws `{ status, code, message, field? }`. */
  api(path: string, method?: string, body?: Json): Promise<Json>;
  /** The confirmation dialog: the note typed (`''` for none), or `null` when dismissed. */
  confirm(question: string, confirmLabel: string): Promise<string | null>;
  notify(text: string, kind: 'ok' | 'error'): void;
  /** Reloads what the open page shows (through `load`) and renders it. */
  refresh(): Promise<void>;
  /** Opens another page (`#/...`) with `text` as its success notice. */
  go(hash: string, text: string): void;
}

/** A schedules page the URL hash names. */
export type SchedulesRoute =
  | { view: 'schedules' }
  | { view: 'new-schedule' }
  | { view: 'schedule'; id: string }
  | { view: 'bad-link' };

/**
 * The console's stored-schedules pages (runs in the browser; serialized with `toString()`, see
 * client.ts): `#/schedules` the list (handler, trigger, enabled, version, last change, the
 * instances serving each, "unserved" when none does; a handler filter and more pages),
 * `#/schedules/<id>` one schedule (its facts, and for the write role its buttons and the edit
 * form), `#/new-schedule` the create form. Self-contained apart from its arguments.
 */
export function consoleSchedules(
  dom: ConsoleDom,
  ctx: SchedulesContext,
  forms: ConsoleScheduleForm,
  cells: ConsoleScheduleCells,
) {
  type Json = Record<string, unknown>;
  const { h, bdi, time, cell } = dom;
  const { describe, statusBadges, servedBy, lastChange } = cells;
  const PAGE = 50;
  const state: {
    handler: string;
    /** What is typed in the handler filter (kept across re-renders until applied). */
    typed: string;
    pages: number;
    list: Json[];
    next: string | null;
    current: Json | null;
    missing: string | null;
    /** The open form, kept across re-renders so polling never drops what is typed. */
    form: { key: string; version: number; handle: ScheduleFormHandle } | null;
  } = {
    handler: '',
    typed: '',
    pages: 1,
    list: [],
    next: null,
    current: null,
    missing: null,
    form: null,
  };

  const link = (id: string): string => `#/schedules/${encodeURIComponent(id)}`;

  /** The schedules page `hash` names, or `null` when it names another page. */
  function route(hash: string): SchedulesRoute | null {
    if (hash === '/schedules') return { view: 'schedules' };
    if (hash === '/new-schedule') return { view: 'new-schedule' };
    const match = /^\/schedules\/(.+)$/.exec(hash);
    if (!match) return null;
    try {
      return { view: 'schedule', id: decodeURIComponent(match[1] as string) };
    } catch {
      return { view: 'bad-link' };
    }
  }

  /** Loads what `r` shows: the list (as many pages as were opened), or one schedule. */
  async function load(r: SchedulesRoute): Promise<void> {
    if (r.view === 'bad-link') return;
    if (r.view === 'schedule') {
      try {
        state.current = (await ctx.api(`/schedules/${encodeURIComponent(r.id)}`)).schedule as Json;
        state.missing = null;
      } catch (error) {
        if ((error as { status?: number }).status !== 404) throw error;
        state.current = null;
        state.missing = r.id;
      }
      return;
    }
    const list: Json[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < state.pages; page++) {
      const query = new URLSearchParams({ limit: String(PAGE) });
      if (state.handler) query.set('handler', state.handler);
      if (cursor) query.set('cursor', cursor);
      const answer = await ctx.api(`/schedules?${query}`);
      list.push(...((answer.schedules as Json[] | undefined) ?? []));
      cursor = (answer.nextCursor as string | null) ?? null;
      if (!cursor) break;
    }
    state.list = list;
    state.next = cursor;
  }

  /** Forgets per-page state when the user goes to another page. */
  function leave(): void {
    state.form = null;
    state.current = null;
    state.missing = null;
  }

  async function mutate(s: Json, action: 'enable' | 'disable' | 'remove'): Promise<void> {
    const id = String(s.id);
    const body: Json = { expectedVersion: s.version };
    if (action === 'remove') {
      const note = await ctx.confirm(
        `Delete schedule "${id}"? Every instance stops firing it; this cannot be undone.`,
        'Delete',
      );
      if (note === null) return;
      if (note) body.note = note;
    }
    try {
      const answer = await ctx.api(`/schedules/${encodeURIComponent(id)}/${action}`, 'POST', body);
      const version = (answer.schedule as Json).version;
      if (action === 'remove' && location.hash !== '#/schedules') {
        ctx.go('#/schedules', `Schedule "${id}" deleted.`);
        return;
      }
      ctx.notify(
        action === 'remove'
          ? `Schedule "${id}" deleted.`
          : `Schedule "${id}" ${action}d (version ${String(version)}).`,
        'ok',
      );
      state.form = null;
    } catch (error) {
      ctx.notify(`Could not ${action} "${id}": ${(error as Error).message}`, 'error');
    }
    await ctx.refresh();
  }

  /** Enable or disable, and delete: `null` for the read role. */
  function buttons(s: Json): HTMLElement | null {
    if (ctx.role() !== 'write') return null;
    const id = String(s.id);
    const toggle = s.enabled ? 'disable' : 'enable';
    return h(
      'div',
      { class: 'actions' },
      h(
        'button',
        { type: 'button', 'data-key': `${toggle}:${id}`, onclick: () => mutate(s, toggle) },
        s.enabled ? 'Disable' : 'Enable',
      ),
      h(
        'button',
        { type: 'button', 'data-key': `remove:${id}`, onclick: () => mutate(s, 'remove') },
        'Delete',
      ),
    );
  }

  function listView(now: number): HTMLElement {
    const filter = h('input', {
      id: 'schedule-handler-filter',
      name: 'handler',
      type: 'search',
      value: state.typed,
      placeholder: 'handler',
      'aria-label': 'Only schedules of handler',
      oninput: (event: Event) => {
        state.typed = (event.target as HTMLInputElement).value;
      },
    }) as HTMLInputElement;
    const toolbar = h(
      'form',
      {
        class: 'toolbar actions',
        onsubmit: async (event: Event) => {
          event.preventDefault();
          state.handler = filter.value.trim();
          state.pages = 1;
          await ctx.refresh();
        },
      },
      filter,
      h('button', { type: 'submit' }, 'Filter'),
      ctx.role() === 'write'
        ? h(
            'a',
            { href: '#/new-schedule', class: 'button primary', id: 'new-schedule' },
            'New schedule',
          )
        : null,
    );
    const unserved = state.list.filter((s) => s.unserved).map((s) => String(s.id));
    const rows = state.list.map((s) =>
      h(
        'tr',
        { 'data-schedule': String(s.id) },
        cell('Schedule', h('a', { href: link(String(s.id)) }, bdi(s.id))),
        cell('Handler', h('code', null, bdi(s.handler))),
        cell('Trigger', h('code', null, describe(s.trigger as Json))),
        cell('Status', ...statusBadges(s)),
        cell('Version', String(s.version)),
        cell('Last change', lastChange(s, now)),
        cell('Served by', servedBy(s)),
        cell('Actions', buttons(s)),
      ),
    );
    return h(
      'section',
      null,
      h('h1', null, 'Schedules'),
      toolbar,
      unserved.length > 0
        ? h(
            'p',
            { class: 'warning', role: 'alert', id: 'unserved' },
            'Unserved: no live instance has the handler of ',
            ...unserved.flatMap((id, i) => [
              i === 0 ? '' : ', ',
              h('a', { href: link(id) }, bdi(id)),
            ]),
            '. Nothing fires them until an instance that registers the handler is running.',
          )
        : null,
      rows.length === 0
        ? h(
            'p',
            { class: 'muted', id: 'schedules-empty' },
            state.handler ? `No schedule of handler "${state.handler}".` : 'No stored schedules.',
          )
        : h(
            'table',
            { class: 'table', id: 'schedules' },
            h(
              'thead',
              null,
              h(
                'tr',
                null,
                ...[
                  'Schedule',
                  'Handler',
                  'Trigger',
                  'Status',
                  'Version',
                  'Last change',
                  'Served by',
                  'Actions',
                ].map((t) => h('th', { scope: 'col' }, t)),
              ),
            ),
            h('tbody', null, ...rows),
          ),
      state.next
        ? h(
            'button',
            {
              type: 'button',
              id: 'more-schedules',
              onclick: async () => {
                state.pages++;
                await ctx.refresh();
              },
            },
            'More schedules',
          )
        : null,
    );
  }

  /** The form for `schedule` (null: a new one), the same element while its key is unchanged. */
  function formFor(schedule: Json | null): HTMLElement {
    const key = schedule ? `edit:${String(schedule.id)}` : 'new';
    if (state.form?.key === key) return state.form.handle.element;
    const handlers = [...new Set(state.list.map((s) => String(s.handler)))].sort();
    const handle = forms.scheduleForm({
      schedule,
      handlers,
      submit: async (body) => {
        if (!schedule) {
          const answer = await ctx.api('/schedules', 'POST', body);
          const id = String((answer.schedule as Json).id);
          state.form = null;
          ctx.go(link(id), `Schedule "${id}" created.`);
          return;
        }
        const answer = await ctx.api(
          `/schedules/${encodeURIComponent(String(schedule.id))}/update`,
          'POST',
          { ...body, expectedVersion: state.form?.version ?? schedule.version },
        );
        const saved = answer.schedule as Json;
        ctx.notify(
          `Schedule "${String(saved.id)}" saved (version ${String(saved.version)}).`,
          'ok',
        );
        state.form = null;
        await ctx.refresh();
      },
      reload: () => {
        state.form = null;
        void ctx.refresh();
      },
    });
    state.form = { key, version: Number(schedule?.version ?? 0), handle };
    return handle.element;
  }

  function scheduleView(id: string, now: number): HTMLElement {
    const s = state.current;
    const back = h('p', null, h('a', { href: '#/schedules' }, '← Schedules'));
    if (!s || s.id !== id) {
      return h(
        'section',
        null,
        back,
        h('h1', null, bdi(id)),
        state.missing === id
          ? h(
              'p',
              { class: 'warning', id: 'schedule-missing' },
              'No such schedule (never created, or deleted).',
            )
          : h('p', { class: 'muted' }, 'Loading…'),
      );
    }
    const job = `schedule:${id}`;
    const stale =
      state.form && state.form.version !== s.version
        ? h(
            'p',
            { class: 'warning', role: 'alert', id: 'schedule-stale' },
            `Changed since you opened the form: now version ${String(s.version)} by `,
            bdi(s.updatedBy),
            '. Saving will be refused; reload the form to edit the new version.',
          )
        : null;
    const write = ctx.role() === 'write';
    return h(
      'section',
      { id: 'schedule' },
      back,
      h('h1', null, bdi(id), ' ', ...statusBadges(s)),
      h(
        'dl',
        { class: 'facts' },
        h('dt', null, 'Handler'),
        h('dd', null, h('code', null, bdi(s.handler))),
        h('dt', null, 'Trigger'),
        h('dd', { id: 'schedule-trigger' }, h('code', null, describe(s.trigger as Json))),
        h('dt', null, 'Version'),
        h('dd', { id: 'schedule-version' }, String(s.version)),
        h('dt', null, 'Served by'),
        h('dd', null, servedBy(s)),
        h('dt', null, 'Data'),
        h('dd', null, h('pre', null, JSON.stringify(s.data, null, 2))),
        h('dt', null, 'Options'),
        h('dd', null, h('pre', null, JSON.stringify(s.options ?? {}, null, 2))),
        h('dt', null, 'Created'),
        h('dd', null, time(s.createdAt as number, now), ' by ', bdi(s.createdBy)),
        h('dt', null, 'Last change'),
        h('dd', null, time(s.updatedAt as number, now), ' by ', bdi(s.updatedBy)),
        h('dt', null, 'Runs'),
        h(
          'dd',
          null,
          h('a', { href: `#/jobs/${encodeURIComponent(job)}` }, 'history of ', bdi(job)),
        ),
      ),
      buttons(s),
      write ? h('h2', null, 'Edit') : null,
      stale,
      write ? formFor(s) : null,
    );
  }

  function newView(): HTMLElement {
    return h(
      'section',
      null,
      h('p', null, h('a', { href: '#/schedules' }, '← Schedules')),
      h('h1', null, 'New schedule'),
      ctx.role() === 'write'
        ? formFor(null)
        : h('p', { class: 'warning' }, 'Read only: this token cannot create schedules.'),
    );
  }

  /** The page for `r`. */
  function view(r: SchedulesRoute, now: number): HTMLElement | null {
    if (r.view === 'schedules') return listView(now);
    if (r.view === 'new-schedule') return newView();
    if (r.view === 'schedule') return scheduleView(r.id, now);
    return null;
  }

  return { route, load, leave, view };
}

/** What {@link consoleSchedules} returns. */
export type ConsoleSchedules = ReturnType<typeof consoleSchedules>;
