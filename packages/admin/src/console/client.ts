/// <reference lib="dom" />

/**
 * The console's browser script. It runs in the browser, not in Node: the handler serves
 * `(${consoleMain})()` as `assets/console.js`, so this one function must be self-contained (no
 * imports, no references to anything outside it). The TypeScript compiler checks it with the DOM
 * types; the package build turns it into plain JavaScript inside the bundle.
 *
 * It renders with `textContent` and `createElement` only (no `innerHTML`), so job names and
 * error text from the fleet can never become markup. Routes live in the URL hash:
 * `#/` jobs, `#/instances`, `#/jobs/<name>`.
 */
export function consoleMain(): void {
  type Json = Record<string, unknown>;
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
      el.append(typeof child === 'string' ? document.createTextNode(child) : child);
    }
    return el;
  }

  function token(): string | null {
    return sessionStorage.getItem(TOKEN_KEY);
  }

  /** An API error answer: its HTTP status and fleetcron code. */
  type HttpError = Error & { status: number; code: string };

  function httpError(status: number, code: string, message: string): HttpError {
    return Object.assign(new Error(message), { status, code });
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
      );
    }
    return data;
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

  function jobs(): Json[] {
    return ((state.fleet?.jobs as Json[] | undefined) ?? []).slice();
  }

  function instances(): Json[] {
    return (state.fleet?.instances as Json[] | undefined) ?? [];
  }

  /** Relative time, the wall-clock time in the job's zone, and a note when fires are skipped. */
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
      job.paused ? h('span', { class: 'skip-note' }, 'will be skipped (paused)') : null,
    );
  }

  /** Opens a modal confirmation; resolves true on confirm. Esc and Cancel resolve false. */
  function confirmAction(question: string, confirmLabel: string): Promise<boolean> {
    return new Promise((resolve) => {
      const dialog = h('dialog', { class: 'confirm', 'aria-labelledby': 'confirm-title' });
      // Give the focus back to the button that opened the dialog (or its re-rendered twin).
      const opener = document.activeElement as HTMLElement | null;
      const openerKey = opener?.getAttribute('data-key') ?? null;
      const done = (ok: boolean): void => {
        dialog.remove();
        const target = opener?.isConnected
          ? opener
          : openerKey
            ? (root.querySelector(`[data-key="${CSS.escape(openerKey)}"]`) as HTMLElement | null)
            : null;
        target?.focus();
        resolve(ok);
      };
      dialog.append(
        h('h2', { id: 'confirm-title' }, question),
        h(
          'div',
          { class: 'dialog-buttons' },
          h('button', { type: 'button', class: 'secondary', onclick: () => done(false) }, 'Cancel'),
          h(
            'button',
            { type: 'button', class: 'primary', 'data-confirm': '', onclick: () => done(true) },
            confirmLabel,
          ),
        ),
      );
      dialog.addEventListener('cancel', (event) => {
        event.preventDefault();
        done(false);
      });
      document.body.append(dialog);
      (dialog as HTMLDialogElement).showModal();
      (dialog.querySelector('[data-confirm]') as HTMLElement).focus();
    });
  }

  function notify(text: string, kind: 'ok' | 'error'): void {
    state.notice = { text, kind };
    const box = document.getElementById('notice') as HTMLElement;
    box.className = `notice notice-${kind}`;
    box.textContent = text;
  }

  async function mutate(job: string, action: 'pause' | 'resume' | 'run'): Promise<void> {
    const labels = { pause: 'Pause', resume: 'Resume', run: 'Run now' } as const;
    const questions = {
      pause: `Pause "${job}" on every instance? Its fires are skipped until resumed.`,
      resume: `Resume "${job}" on every instance?`,
      run: `Run "${job}" once now, on one instance of the fleet?`,
    } as const;
    if (!(await confirmAction(questions[action], labels[action]))) return;
    try {
      await api(`/jobs/${encodeURIComponent(job)}/${action}`, 'POST', {});
      notify(
        action === 'run'
          ? `Run of "${job}" requested.`
          : `"${job}" ${action === 'pause' ? 'paused' : 'resumed'}.`,
        'ok',
      );
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
      definedBy(job) > 0
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

  /** How many live instances define the job (0: only its stored state is known). */
  function definedBy(job: Json): number {
    return ((job.definedBy as unknown[] | undefined) ?? []).length;
  }

  function jobLink(name: string): HTMLElement {
    return h('a', { href: `#/jobs/${encodeURIComponent(name)}` }, name);
  }

  function cell(label: string, ...children: Array<Node | string | null>): HTMLElement {
    return h('td', { 'data-label': label }, h('div', { class: 'cell' }, ...children));
  }

  function jobsView(now: number): HTMLElement {
    const list = jobs().sort((a, b) => String(a.name).localeCompare(String(b.name)));
    const rows = list.map((job) =>
      h(
        'tr',
        { 'data-job': String(job.name) },
        cell('Job', jobLink(String(job.name))),
        cell('Trigger', h('code', null, String(job.trigger ?? '—'))),
        cell(
          'Status',
          job.paused ? badge('paused', 'paused') : badge('active', 'active'),
          job.drift ? badge('drift', 'drift') : null,
        ),
        cell('Next fire', nextFireCell(job, now)),
        cell('Last run', statusBadge(job.lastStatus), ' ', time(job.lastFinishedAt as number, now)),
        cell('Actions', actions(job)),
      ),
    );
    const drifting = list.filter((j) => j.drift).map((j) => String(j.name));
    return h(
      'section',
      null,
      h('h1', null, 'Jobs'),
      drifting.length > 0
        ? h(
            'p',
            { class: 'warning', role: 'alert' },
            `Drift: live instances define ${drifting.join(', ')} differently. Deploy one definition everywhere.`,
          )
        : null,
      list.length === 0
        ? h(
            'p',
            { class: 'muted' },
            'No jobs: no live instance defines any job and no job has history.',
          )
        : h(
            'table',
            { class: 'table', id: 'jobs' },
            h(
              'thead',
              null,
              h(
                'tr',
                null,
                ...['Job', 'Trigger', 'Status', 'Next fire', 'Last run', 'Actions'].map((t) =>
                  h('th', { scope: 'col' }, t),
                ),
              ),
            ),
            h('tbody', null, ...rows),
          ),
    );
  }

  function instancesView(now: number): HTMLElement {
    const rows = instances().map((i) => {
      const clock = i.clock as Json | null;
      return h(
        'tr',
        null,
        cell('Instance', h('code', null, String(i.instanceId))),
        cell('Host', `${String(i.host)} (pid ${String(i.pid)})`),
        cell('Version', String(i.version)),
        cell('Started', time(i.startedAt as number, now)),
        cell('Last seen', time(i.lastSeenAt as number, now)),
        cell('Jobs', String(((i.jobs as Json[] | undefined) ?? []).length)),
        cell('Clock offset', clock ? `${Math.round(Number(clock.offsetMs))} ms` : '—'),
      );
    });
    return h(
      'section',
      null,
      h('h1', null, 'Instances'),
      rows.length === 0
        ? h('p', { class: 'muted' }, 'No live instance.')
        : h(
            'table',
            { class: 'table', id: 'instances' },
            h(
              'thead',
              null,
              h(
                'tr',
                null,
                ...[
                  'Instance',
                  'Host',
                  'Version',
                  'Started',
                  'Last seen',
                  'Jobs',
                  'Clock offset',
                ].map((t) => h('th', { scope: 'col' }, t)),
              ),
            ),
            h('tbody', null, ...rows),
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

  function historyTable(now: number): HTMLElement {
    const executions = (state.history?.pages ?? []).flatMap((p) => (p.executions as Json[]) ?? []);
    if (executions.length === 0)
      return h('p', { class: 'muted', id: 'history-empty' }, 'No runs recorded.');
    const rows = executions.map((run) =>
      h(
        'tr',
        { 'data-status': String(run.status) },
        cell('Fire', time(run.fireAt as number, now)),
        cell(
          'Status',
          statusBadge(run.status),
          run.reason ? h('span', { class: 'muted' }, ` (${String(run.reason)})`) : null,
        ),
        cell('Started', time(run.startedAt as number, now)),
        cell(
          'Took',
          typeof run.finishedAt === 'number'
            ? `${Math.max(0, (run.finishedAt as number) - (run.startedAt as number))} ms`
            : '—',
        ),
        cell('Instance', h('code', null, String(run.instanceId))),
        cell('Trigger', run.requestedBy ? `manual, by ${String(run.requestedBy)}` : 'schedule'),
        cell(
          'Error',
          run.error
            ? h(
                'details',
                { 'data-key': `run:${String(run.id)}` },
                h('summary', null, String(run.error).split('\n')[0] ?? ''),
                h('pre', null, String(run.error)),
              )
            : null,
        ),
      ),
    );
    return h(
      'table',
      { class: 'table', id: 'history' },
      h(
        'thead',
        null,
        h(
          'tr',
          null,
          ...['Fire', 'Status', 'Started', 'Took', 'Instance', 'Trigger', 'Error'].map((t) =>
            h('th', { scope: 'col' }, t),
          ),
        ),
      ),
      h('tbody', null, ...rows),
    );
  }

  function jobView(name: string, now: number): HTMLElement {
    const job = jobs().find((j) => j.name === name);
    if (!job)
      return h('section', null, h('h1', null, name), h('p', { class: 'warning' }, 'Unknown job.'));
    const fires = ((job.nextFires as Json[] | undefined) ?? []).map((f) =>
      h(
        'li',
        null,
        h('code', null, String(f.utc)),
        ' · ',
        String(f.local ?? ''),
        ' ',
        h('span', { class: 'muted' }, String(f.zone ?? '')),
      ),
    );
    const statuses = [
      '',
      'succeeded',
      'failed',
      'timed_out',
      'skipped',
      'lease_lost',
      'aborted',
      'running',
    ];
    const filter = h(
      'select',
      {
        id: 'status-filter',
        'aria-label': 'Show runs with status',
        onchange: async (event: Event) => {
          await loadHistory(name, (event.target as HTMLSelectElement).value, false);
          render();
        },
      },
      ...statuses.map((s) =>
        h(
          'option',
          { value: s, selected: (state.history?.status ?? '') === s },
          s === '' ? 'all statuses' : s,
        ),
      ),
    );
    return h(
      'section',
      null,
      h('p', null, h('a', { href: '#/' }, '← Jobs')),
      h(
        'h1',
        null,
        name,
        ' ',
        job.paused ? badge('paused', 'paused') : badge('active', 'active'),
        job.drift ? badge('drift', 'drift') : null,
      ),
      job.drift
        ? h(
            'p',
            { class: 'warning', role: 'alert' },
            'Drift: live instances define this job differently.',
          )
        : null,
      h(
        'dl',
        { class: 'facts' },
        h('dt', null, 'Trigger'),
        h('dd', null, h('code', null, String(job.trigger ?? '—'))),
        h('dt', null, 'Paused'),
        h(
          'dd',
          null,
          job.paused ? `yes${job.pausedBy ? `, by ${String(job.pausedBy)}` : ''}` : 'no',
        ),
        h('dt', null, 'Last run'),
        h('dd', null, statusBadge(job.lastStatus), ' ', time(job.lastFinishedAt as number, now)),
        h('dt', null, 'Defined on'),
        h('dd', null, String(((job.definedBy as unknown[]) ?? []).length), ' live instance(s)'),
      ),
      actions(job),
      h('h2', null, 'Next fires'),
      fires.length ? h('ol', { class: 'fires' }, ...fires) : h('p', { class: 'muted' }, 'None.'),
      h('h2', null, 'History'),
      h('div', { class: 'toolbar' }, filter),
      historyTable(now),
      state.history?.next
        ? h(
            'button',
            {
              type: 'button',
              class: 'secondary',
              onclick: async () => {
                await loadHistory(name, state.history?.status ?? '', true);
                render();
              },
            },
            'Older runs',
          )
        : null,
    );
  }

  function route(): { view: string; job?: string } {
    const hash = location.hash.replace(/^#/, '') || '/';
    const match = /^\/jobs\/(.+)$/.exec(hash);
    if (match) return { view: 'job', job: decodeURIComponent(match[1] as string) };
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
    const current = route().view;
    const link = (href: string, label: string, view: string): HTMLElement =>
      h('a', { href, 'aria-current': current === view ? 'page' : null }, label);
    return h(
      'nav',
      { 'aria-label': 'Main' },
      link('#/', 'Jobs', 'jobs'),
      link('#/instances', `Instances (${instances().length})`, 'instances'),
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
    const now = Date.now();
    const r = route();
    const view =
      r.view === 'instances'
        ? instancesView(now)
        : r.view === 'job'
          ? jobView(r.job as string, now)
          : jobsView(now);
    const status = h(
      'p',
      { class: 'status', 'aria-live': 'polite' },
      state.error
        ? h('span', { class: 'error-text' }, `Refresh failed: ${state.error}`)
        : `Updated ${localTime(state.loadedAt)}`,
    );
    // Re-rendering must not lose the keyboard position or what the user opened: remember the
    // focused element and the open error details by a stable key, and restore them.
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
    const notice = h('div', { id: 'notice', role: 'status' });
    if (state.notice) {
      notice.className = `notice notice-${state.notice.kind}`;
      notice.textContent = state.notice.text;
    }
    root.replaceChildren(nav(), notice, status, h('main', { id: 'main' }, view));
    for (const key of open) if (key) root.querySelector(key)?.setAttribute('open', '');
    if (focused && root.contains(active) === false)
      (root.querySelector(focused) as HTMLElement | null)?.focus();
  }

  async function refresh(): Promise<void> {
    clearTimeout(timer);
    try {
      state.fleet = await api('/fleet');
      const r = route();
      if (r.view === 'job' && r.job) {
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
      root.replaceChildren(
        h('p', { class: 'warning' }, `Cannot reach the API: ${(error as Error).message}`),
      );
      return;
    }
    await refresh();
  }

  window.addEventListener('hashchange', () => {
    state.history = null;
    state.notice = null;
    void refresh();
  });
  document.addEventListener('visibilitychange', () => {
    if (document.visibilityState === 'visible' && state.role) void refresh();
  });
  void start();
}
