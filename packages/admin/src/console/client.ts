/// <reference lib="dom" />
import type { AuditContext, ConsoleAudit } from './audit-view.js';
import type { consoleConfirm } from './confirm.js';
import type { ConsoleDom } from './dom.js';
import type { ConsoleRunRequests, RunRequestPanelContext } from './run-request-panel.js';
import type { ConsoleScheduleCells } from './schedule-cells.js';
import type { ConsoleScheduleForm } from './schedule-form.js';
import type { ConsoleSchedules, SchedulesContext } from './schedules-view.js';
import type { ConsoleViews, ViewContext } from './views.js';

/**
 * The console's browser script: state, API calls, confirmation, routing and rendering. It runs
 * in the browser, not in Node: page.ts serves `consoleDom`, `consoleViews` and this function as
 * `assets/console.js`, each through `toString()`, so each must be self-contained (no imports at
 * run time, nothing referenced outside it but its arguments). The TypeScript compiler checks them
 * with the DOM types; the package build turns them into plain JavaScript inside the bundle.
 *
 * It renders with `textContent` and `createElement` only (no `innerHTML`), so job names and
 * error text from the fleet can never become markup. Routes live in the URL hash:
 * `#/` jobs, `#/instances`, `#/jobs/<name>`, the stored schedules' pages (`#/schedules`,
 * `#/schedules/<id>`, `#/new-schedule`, see schedules-view.ts) and the audit log (`#/audit`,
 * `#/audit/<job>`, see audit-view.ts).
 */
export function consoleMain(
  dom: ConsoleDom,
  makeConfirm: typeof consoleConfirm,
  makeViews: (dom: ConsoleDom, ctx: ViewContext) => ConsoleViews,
  makeSchedules: (
    dom: ConsoleDom,
    ctx: SchedulesContext,
    forms: ConsoleScheduleForm,
    cells: ConsoleScheduleCells,
  ) => ConsoleSchedules,
  makeScheduleForm: (dom: ConsoleDom) => ConsoleScheduleForm,
  makeScheduleCells: (dom: ConsoleDom) => ConsoleScheduleCells,
  makeRunRequests: (dom: ConsoleDom, ctx: RunRequestPanelContext) => ConsoleRunRequests,
  makeAudit: (dom: ConsoleDom, ctx: AuditContext) => ConsoleAudit,
): void {
  type Json = Record<string, unknown>;
  const { h, localTime } = dom;
  const root = document.getElementById('app') as HTMLElement;
  const base = document.body.dataset.base ?? '';
  const refreshMs = Number(document.body.dataset.refreshMs ?? '5000');
  const TOKEN_KEY = 'fleetcron.token';
  const state: {
    role: string | null;
    name: string;
    fleet: Json | null;
    loadedAt: number;
    error: string | null;
    history: { job: string; status: string; pages: Json[]; next: string | null } | null;
    notice: { text: string; kind: 'ok' | 'error' } | null;
  } = { role: null, name: '', fleet: null, loadedAt: 0, error: null, history: null, notice: null };
  let timer: ReturnType<typeof setTimeout> | undefined;
  /** The notice `go` hands to the page it opens (a page change clears notices otherwise). */
  let carried: { text: string; kind: 'ok' | 'error' } | null = null;
  const confirmAction = makeConfirm(dom);
  const runRequests = makeRunRequests(dom, { api: (path) => api(path), refresh });
  const views = makeViews(dom, {
    state: () => state,
    jobs,
    instances,
    actions,
    isRequestedRun: (run) => runRequests.isTrackedRun(run),
    showHistory: async (job, status, more) => {
      await loadHistory(job, status, more);
      render();
    },
  });
  const schedules = makeSchedules(
    dom,
    { role: () => state.role, api, confirm: confirmAction, notify, refresh, go },
    makeScheduleForm(dom),
    makeScheduleCells(dom),
  );
  const audit = makeAudit(dom, { api, refresh });

  function token(): string | null {
    return sessionStorage.getItem(TOKEN_KEY);
  }

  /** An API error answer: its HTTP status, fleetcron code and the field it names, if any. */
  type HttpError = Error & { status: number; code: string; field?: string };

  function httpError(status: number, code: string, message: string, field?: unknown): HttpError {
    return Object.assign(new Error(message), {
      status,
      code,
      ...(typeof field === 'string' ? { field } : {}),
    });
  }

  function isHttpError(error: unknown, status: number): boolean {
    return error instanceof Error && (error as HttpError).status === status;
  }

  async function api(path: string, method = 'GET', body?: Json): Promise<Json> {
    const headers: Record<string, string> = { accept: 'application/json' };
    const t = token();
    if (t) headers.authorization = `Bearer ${t}`;
    if (method !== 'GET') {
      headers['content-type'] = 'application/json';
      headers['x-fleetcron-request'] = 'console';
    }
    const response = await fetch(`${base}/api${path}`, {
      method,
      headers,
      credentials: 'same-origin',
      body: method === 'GET' ? undefined : JSON.stringify(body ?? {}),
    });
    const data = (await response.json().catch(() => ({}))) as Json;
    if (!response.ok) {
      const error = (data.error ?? {}) as Json;
      throw httpError(
        response.status,
        String(error.code ?? 'HTTP_ERROR'),
        String(error.message ?? `HTTP ${response.status}`),
        error.field,
      );
    }
    return data;
  }

  function jobs(): Json[] {
    return ((state.fleet?.jobs as Json[] | undefined) ?? []).slice();
  }

  function instances(): Json[] {
    return (state.fleet?.instances as Json[] | undefined) ?? [];
  }

  /** Opens another page (`#/...`) with `text` as its success notice. */
  function go(hash: string, text: string): void {
    carried = { text, kind: 'ok' };
    location.hash = hash;
  }

  function notify(text: string, kind: 'ok' | 'error'): void {
    state.notice = { text, kind };
    const box = document.getElementById('notice') as HTMLElement;
    box.className = `notice notice-${kind}`;
    box.textContent = dom.visible(text);
  }

  /**
   * "Run now": the dialog takes a note and optional JSON data; data that is not JSON, or that the
   * API refuses (400 naming `data`), is shown on the field and the dialog stays open. Once
   * requested, the run-request panel follows the request to its run's outcome.
   */
  async function runNow(job: string): Promise<void> {
    const question = `Run "${job}" once now, on one instance of the fleet?`;
    await confirmAction(question, 'Run now', async (note, text) => {
      let data: unknown;
      if (text.trim() !== '') {
        try {
          data = JSON.parse(text);
        } catch (error) {
          return `Data must be JSON (or empty): ${(error as Error).message}`;
        }
      }
      try {
        const body: Json = { ...(note ? { note } : {}), ...(data === undefined ? {} : { data }) };
        const answer = await api(`/jobs/${encodeURIComponent(job)}/run`, 'POST', body);
        notify(`Run of "${job}" requested.`, 'ok');
        runRequests.track(String((answer.request as Json).id), job);
      } catch (error) {
        const field = (error as HttpError).field;
        if (field === 'data' || field === 'body') return (error as Error).message;
        notify(`Could not run now "${job}": ${(error as Error).message}`, 'error');
      }
      return null;
    });
    await refresh();
  }

  async function mutate(job: string, action: 'pause' | 'resume' | 'run'): Promise<void> {
    if (action === 'run') return runNow(job);
    const labels = { pause: 'Pause', resume: 'Resume' } as const;
    const questions = {
      pause: `Pause "${job}" on every instance? Its fires are skipped until resumed.`,
      resume: `Resume "${job}" on every instance?`,
    } as const;
    const note = await confirmAction(questions[action], labels[action]);
    if (note === null) return;
    try {
      await api(`/jobs/${encodeURIComponent(job)}/${action}`, 'POST', note ? { note } : {});
      notify(`"${job}" ${action === 'pause' ? 'paused' : 'resumed'}.`, 'ok');
    } catch (error) {
      notify(
        `Could not ${labels[action].toLowerCase()} "${job}": ${(error as Error).message}`,
        'error',
      );
    }
    await refresh();
  }

  function actions(job: Json): HTMLElement | null {
    if (state.role !== 'write') return null;
    const name = String(job.name);
    return h(
      'div',
      { class: 'actions' },
      job.paused
        ? h(
            'button',
            { type: 'button', 'data-key': `resume:${name}`, onclick: () => mutate(name, 'resume') },
            'Resume',
          )
        : h(
            'button',
            { type: 'button', 'data-key': `pause:${name}`, onclick: () => mutate(name, 'pause') },
            'Pause',
          ),
      dom.definedBy(job) > 0
        ? h(
            'button',
            { type: 'button', 'data-key': `run:${name}`, onclick: () => mutate(name, 'run') },
            'Run now',
          )
        : h(
            'button',
            { type: 'button', disabled: true, title: 'No live instance defines this job' },
            'Run now',
          ),
    );
  }

  async function loadHistory(job: string, status: string, more: boolean): Promise<void> {
    const current = state.history;
    const cursor = more && current ? current.next : null;
    const query = new URLSearchParams({ limit: '20' });
    if (status) query.set('status', status);
    if (cursor) query.set('cursor', cursor);
    const page = await api(`/jobs/${encodeURIComponent(job)}/history?${query}`);
    const pages = more && current ? [...current.pages, page] : [page];
    state.history = { job, status, pages, next: (page.nextCursor as string | null) ?? null };
  }

  /**
   * The view the URL hash names. A malformed link (`#/jobs/%E0%A4%A`, a cut-off escape) is the
   * `bad-link` view, an error with a way back, never a throw that would stop rendering and polling.
   */
  function route(): { view: string; job?: string } {
    const hash = location.hash.replace(/^#/, '') || '/';
    const own = schedules.route(hash);
    if (own) return own.view === 'schedule' ? { view: own.view, job: own.id } : own;
    const log = audit.route(hash);
    if (log) return log;
    const match = /^\/jobs\/(.+)$/.exec(hash);
    if (match) {
      try {
        return { view: 'job', job: decodeURIComponent(match[1] as string) };
      } catch {
        return { view: 'bad-link' };
      }
    }
    if (hash === '/instances') return { view: 'instances' };
    return { view: 'jobs' };
  }

  function loginView(message: string | null): HTMLElement {
    const input = h('input', {
      id: 'token',
      name: 'token',
      type: 'password',
      autocomplete: 'current-password',
      required: true,
    }) as HTMLInputElement;
    const form = h(
      'form',
      {
        class: 'login',
        onsubmit: (event: Event) => {
          event.preventDefault();
          sessionStorage.setItem(TOKEN_KEY, input.value.trim());
          void start();
        },
      },
      h('h1', null, 'Sign in'),
      message ? h('p', { class: 'warning', role: 'alert' }, message) : null,
      h('label', { for: 'token' }, 'Access token'),
      input,
      h('button', { type: 'submit', class: 'primary' }, 'Sign in'),
    );
    queueMicrotask(() => input.focus());
    return form;
  }

  function nav(): HTMLElement {
    const current = route().view.replace(/^(schedule|new-schedule)$/, 'schedules');
    const link = (href: string, label: string, view: string): HTMLElement =>
      h('a', { href, 'aria-current': current === view ? 'page' : null }, label);
    return h(
      'nav',
      { 'aria-label': 'Main' },
      link('#/', 'Jobs', 'jobs'),
      link('#/instances', `Instances (${instances().length})`, 'instances'),
      link('#/schedules', 'Schedules', 'schedules'),
      link('#/audit', 'Audit', 'audit'),
      h('span', { class: 'spacer' }),
      h(
        'span',
        { class: 'muted', id: 'who' },
        `${state.name} · ${state.role === 'write' ? 'read & write' : 'read only'}`,
      ),
      h(
        'button',
        {
          type: 'button',
          class: 'link',
          onclick: () => {
            sessionStorage.removeItem(TOKEN_KEY);
            location.reload();
          },
        },
        'Sign out',
      ),
    );
  }

  function render(): void {
    // Re-rendering must not lose the keyboard position or what the user opened: remember the
    // focused element and the open error details by a stable key, and restore them. Read them
    // before building the view: an element it keeps (the schedule form) moves, and loses focus.
    const keyOf = (el: Element | null): string | null => {
      if (!el || el === document.body) return null;
      if (el.id) return `[id="${CSS.escape(el.id)}"]`;
      const key = el.getAttribute('data-key');
      if (key !== null) return `[data-key="${CSS.escape(key)}"]`;
      const href = el.getAttribute('href');
      return href === null ? null : `[href="${CSS.escape(href)}"]`;
    };
    const active = document.activeElement;
    const focused =
      active?.tagName === 'SUMMARY' ? `${keyOf(active.parentElement)} > summary` : keyOf(active);
    const open = Array.from(root.querySelectorAll('details[open]')).map(keyOf);
    const now = Date.now();
    const r = route();
    const scheduleRoute = schedules.route(location.hash.replace(/^#/, '') || '/');
    const auditRoute = audit.route(location.hash.replace(/^#/, '') || '/');
    const view =
      scheduleRoute && scheduleRoute.view !== 'bad-link'
        ? schedules.view(scheduleRoute, now)
        : auditRoute && auditRoute.view !== 'bad-link'
          ? audit.view(auditRoute, now)
          : r.view === 'instances'
            ? views.instancesView(now)
            : r.view === 'job'
              ? views.jobView(r.job as string, now)
              : r.view === 'bad-link'
                ? views.badLinkView(location.hash)
                : views.jobsView(now);
    const status = h(
      'p',
      { class: 'status', 'aria-live': 'polite' },
      state.error
        ? h('span', { class: 'error-text' }, `Refresh failed: ${state.error}`)
        : `Updated ${localTime(state.loadedAt)}`,
    );
    const notice = h('div', { id: 'notice', role: 'status' });
    if (state.notice) {
      notice.className = `notice notice-${state.notice.kind}`;
      notice.textContent = dom.visible(state.notice.text);
    }
    root.replaceChildren(
      nav(),
      notice,
      runRequests.panel(),
      status,
      h('main', { id: 'main' }, view),
    );
    for (const key of open) if (key) root.querySelector(key)?.setAttribute('open', '');
    if (focused && document.activeElement !== active)
      (root.querySelector(focused) as HTMLElement | null)?.focus();
  }

  async function refresh(): Promise<void> {
    clearTimeout(timer);
    try {
      state.fleet = await api('/fleet');
      const r = route();
      const scheduleRoute = schedules.route(location.hash.replace(/^#/, '') || '/');
      const auditRoute = audit.route(location.hash.replace(/^#/, '') || '/');
      if (scheduleRoute) await schedules.load(scheduleRoute);
      else if (auditRoute) await audit.load(auditRoute);
      else if (r.view === 'job' && r.job) {
        const sameJob = state.history?.job === r.job;
        await loadHistory(r.job, sameJob ? (state.history?.status ?? '') : '', false);
      }
      state.loadedAt = Date.now();
      state.error = null;
    } catch (error) {
      if (isHttpError(error, 401)) {
        sessionStorage.removeItem(TOKEN_KEY);
        root.replaceChildren(loginView('Sign in again: the token was refused.'));
        return;
      }
      state.error = (error as Error).message;
    }
    render();
    timer = setTimeout(() => void refresh(), refreshMs);
  }

  async function start(): Promise<void> {
    try {
      const me = await api('/me');
      state.role = String(me.role);
      state.name = String(me.name);
    } catch (error) {
      if (isHttpError(error, 401)) {
        const hadToken = token() !== null;
        sessionStorage.removeItem(TOKEN_KEY);
        root.replaceChildren(loginView(hadToken ? 'That token was refused.' : null));
        return;
      }
      if (isHttpError(error, 429)) {
        sessionStorage.removeItem(TOKEN_KEY);
        root.replaceChildren(loginView((error as Error).message));
        return;
      }
      root.replaceChildren(
        h('p', { class: 'warning' }, `Cannot reach the API: ${(error as Error).message}`),
      );
      return;
    }
    await refresh();
  }

  window.addEventListener('hashchange', () => {
    state.history = null;
    state.notice = carried;
    carried = null;
    schedules.leave();
    audit.leave();
    void refresh();
  });
  document.addEventListener('visibilitychange', () => {
    if (document.visibilityState === 'visible' && state.role) void refresh();
  });
  void start();
}
