/// <reference lib="dom" />
import type { ConsoleDom } from './dom.js';

/** What the run-request panel needs from the console. */
export interface RunRequestPanelContext {
  /** Calls the JSON API (`GET` by default). */
  api(path: string): Promise<Record<string, unknown>>;
  /** Reloads the page's data (called once the run has ended, so history shows it). */
  refresh(): Promise<void>;
}

/**
 * The console's run-request panel (runs in the browser; serialized with `toString()`, see
 * client.ts): after "Run now" it polls `GET api/run-requests/:id` every second and shows where the
 * request is (pending, taken by which instance, decided as which fire) and then the run's outcome,
 * with a link to the job's history, where the run's row is marked. It stays across pages until
 * dismissed or replaced by the next request. Self-contained apart from its arguments.
 */
export function consoleRunRequests(dom: ConsoleDom, ctx: RunRequestPanelContext) {
  type Json = Record<string, unknown>;
  const { h, bdi, statusBadge, localTime } = dom;
  /** How often the panel asks, ms, and for how long at most (then it says it stopped). */
  const POLL_MS = 1000;
  const GIVE_UP_MS = 10 * 60_000;
  let current: {
    id: string;
    job: string;
    since: number;
    view: Json | null;
    error: string | null;
  } | null = null;
  let timer: ReturnType<typeof setTimeout> | undefined;

  const at = (ms: unknown): string => (typeof ms === 'number' ? localTime(ms) : '—');

  /** One sentence for the request's state. */
  function stateLine(request: Json): Array<Node | string> {
    if (request.state === 'pending')
      return [
        Number(request.takes) === 0
          ? 'Pending: waiting for an instance to take it.'
          : `Pending again after ${String(request.takes)} take(s): the next instance to poll takes it.`,
      ];
    if (request.state === 'taken')
      return [
        'Taken by ',
        h('code', null, bdi(request.takenBy)),
        ` until ${at(request.takenUntil)}.`,
      ];
    return [
      `Decided as the fire of ${at(request.fireAt)} by `,
      h('code', null, bdi(request.decidedBy)),
      '.',
    ];
  }

  function outcomeLine(view: Json): Array<Node | string | null> {
    const rows = (view.executions as Json[] | undefined) ?? [];
    if (rows.length === 0) return ['Its run is not recorded yet.'];
    if (view.outcome === null || view.outcome === undefined)
      return ['Running on ', h('code', null, bdi(rows[0]?.instanceId)), '.'];
    const first = rows.find((r) => r.status !== 'succeeded') ?? rows[0] ?? {};
    const took =
      typeof first.finishedAt === 'number' && typeof first.startedAt === 'number'
        ? `, took ${first.finishedAt - first.startedAt} ms`
        : '';
    return [
      statusBadge(view.outcome),
      first.reason ? ` (${String(first.reason)})` : null,
      ' on ',
      h('code', null, bdi(first.instanceId)),
      took,
      first.error ? `: ${String(first.error).split('\n')[0]}` : '',
    ];
  }

  /** The panel (an empty placeholder when no request is tracked). */
  function panel(): HTMLElement {
    const box = h('section', {
      id: 'run-request',
      'aria-live': 'polite',
      'aria-label': 'Run request',
    });
    if (!current) return box;
    const request = (current.view?.request as Json | undefined) ?? null;
    const done = current.view?.outcome !== null && current.view?.outcome !== undefined;
    box.className = 'run-request';
    box.dataset.state = done ? 'done' : String(request?.state ?? 'sent');
    const parts = [
      h(
        'p',
        null,
        'Run request for ',
        dom.jobLink(current.job),
        ' ',
        h('code', { class: 'muted' }, current.id),
      ),
      h('p', { class: 'request-state' }, ...(request ? stateLine(request) : ['Sent.'])),
      request?.state === 'decided' && current.view
        ? h('p', { class: 'request-outcome' }, ...outcomeLine(current.view))
        : null,
      current.error ? h('p', { class: 'error-text' }, current.error) : null,
      h(
        'p',
        null,
        request?.state === 'decided'
          ? h(
              'a',
              { href: `#/jobs/${encodeURIComponent(current.job)}`, class: 'history-link' },
              'See the run in the history',
            )
          : null,
        ' ',
        h('button', { type: 'button', class: 'link', onclick: dismiss }, 'Dismiss'),
      ),
    ];
    for (const part of parts) if (part) box.append(part);
    return box;
  }

  function show(): void {
    document.getElementById('run-request')?.replaceWith(panel());
  }

  function dismiss(): void {
    clearTimeout(timer);
    current = null;
    show();
  }

  async function poll(): Promise<void> {
    const tracked = current;
    if (!tracked) return;
    try {
      tracked.view = await ctx.api(`/run-requests/${encodeURIComponent(tracked.id)}`);
      tracked.error = null;
    } catch (error) {
      tracked.error = `Could not read the request: ${(error as Error).message}`;
    }
    if (current !== tracked) return;
    const ended = tracked.view?.outcome !== null && tracked.view?.outcome !== undefined;
    if (!ended && Date.now() - tracked.since > GIVE_UP_MS)
      tracked.error = 'Stopped watching after 10 minutes; the request stays and may still run.';
    show();
    if (ended) await ctx.refresh();
    else if (!tracked.error?.startsWith('Stopped')) timer = setTimeout(() => void poll(), POLL_MS);
  }

  /** Starts showing request `id` of `job` (replacing the one shown). */
  function track(id: string, job: string): void {
    clearTimeout(timer);
    current = { id, job, since: Date.now(), view: null, error: null };
    show();
    void poll();
  }

  /** Whether a history row is the tracked request's run (marked in the history table). */
  function isTrackedRun(run: Json): boolean {
    const request = (current?.view?.request as Json | undefined) ?? null;
    return !!request && request.job === run.job && request.fireAt === run.fireAt;
  }

  return { panel, track, isTrackedRun };
}

/** What {@link consoleRunRequests} returns. */
export type ConsoleRunRequests = ReturnType<typeof consoleRunRequests>;
