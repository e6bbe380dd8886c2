/// <reference lib="dom" />
import type { ConsoleDom, Json } from './dom.js';

/** What the views need from the console's state and actions (see client.ts). */
export interface ViewContext {
  state(): { history: { job: string; status: string; pages: Json[]; next: string | null } | null };
  jobs(): Json[];
  instances(): Json[];
  /** The job's buttons for the write role, `null` for read-only. */
  actions(job: Json): HTMLElement | null;
  /** Whether a history row is the run of the run request the console follows (marked). */
  isRequestedRun(run: Json): boolean;
  /** Loads (or, with `more`, extends) a job's history with a status filter, then re-renders. */
  showHistory(job: string, status: string, more: boolean): Promise<void>;
}

/**
 * The console's pages: jobs table, instances list, a job's page with its history (runs in the
 * browser; serialized with `toString()`, see client.ts). Self-contained apart from its
 * arguments.
 */
export function consoleViews(dom: ConsoleDom, ctx: ViewContext) {
  type Json = Record<string, unknown>;
  const { h, bdi, time, badge, statusBadge, jobLink, cell, nextFireCell } = dom;

  /** A link the console cannot read (a cut-off percent escape): say so, offer the way back. */
  function badLinkView(hash: string): HTMLElement {
    return h(
      'section',
      { id: 'bad-link' },
      h('h1', null, 'Malformed link'),
      h(
        'p',
        { class: 'warning', role: 'alert' },
        'This link does not name a job: ',
        h('code', null, hash.slice(0, 200)),
        ' is not valid percent-encoding. Open the job from the list instead.',
      ),
      h('p', null, h('a', { href: '#/' }, '← Jobs')),
    );
  }

  /**
   * Which live instances define a drifting job how: one row per definition (majority first),
   * its trigger, its definition hash and the instance ids.
   */
  function definitionsTable(job: Json): HTMLElement | null {
    const definitions = (job.definitions as Json[] | undefined) ?? [];
    if (definitions.length < 2) return null;
    return h(
      'table',
      { class: 'table', id: 'definitions' },
      h(
        'thead',
        null,
        h(
          'tr',
          null,
          ...['Trigger', 'Definition', 'Instances'].map((t) => h('th', { scope: 'col' }, t)),
        ),
      ),
      h(
        'tbody',
        null,
        ...definitions.map((d) =>
          h(
            'tr',
            { 'data-hash': String(d.hash) },
            cell('Trigger', h('code', null, String(d.trigger ?? '—'))),
            cell('Definition', h('code', null, String(d.hash).slice(0, 12))),
            cell(
              'Instances',
              `${((d.instances as unknown[]) ?? []).length}: `,
              ...((d.instances as unknown[]) ?? []).flatMap((id, i) => [
                i === 0 ? '' : ', ',
                h('code', null, bdi(id)),
              ]),
            ),
          ),
        ),
      ),
    );
  }

  function jobsView(now: number): HTMLElement {
    const list = ctx.jobs().sort((a, b) => String(a.name).localeCompare(String(b.name)));
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
        cell('Actions', ctx.actions(job)),
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
            { class: 'warning', role: 'alert', id: 'drift' },
            'Drift: live instances define ',
            ...drifting.flatMap((name, i) => [i === 0 ? '' : ', ', jobLink(name)]),
            ' differently (open a job to see which instances define what). Deploy one definition everywhere.',
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
    const rows = ctx.instances().map((i) => {
      const clock = i.clock as Json | null;
      return h(
        'tr',
        null,
        cell('Instance', h('code', null, bdi(i.instanceId))),
        cell('Host', bdi(i.host), ` (pid ${String(i.pid)})`),
        cell('Version', bdi(i.version)),
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

  /** `part 2 of 8` (0-based, as `ctx.shard`) for a part of a sharded fire, `each` for a broadcast run. */
  function partLabel(run: Json): HTMLElement | null {
    const shard = run.shard as Json | null | undefined;
    if (!shard) return null;
    const text = shard.each ? ' each' : ` part ${String(shard.index)} of ${String(shard.count)}`;
    return h('span', { class: 'muted part', 'data-part': String(shard.index) }, text);
  }

  function historyTable(now: number): HTMLElement {
    const executions = (ctx.state().history?.pages ?? []).flatMap(
      (p) => (p.executions as Json[]) ?? [],
    );
    if (executions.length === 0)
      return h('p', { class: 'muted', id: 'history-empty' }, 'No runs recorded.');
    const runRow = (run: Json) =>
      h(
        'tr',
        {
          'data-status': String(run.status),
          ...(ctx.isRequestedRun(run) ? { class: 'requested-run', 'aria-current': 'true' } : {}),
        },
        cell('Fire', time(run.fireAt as number, now), partLabel(run)),
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
        cell('Instance', h('code', null, bdi(run.instanceId))),
        cell(
          'Trigger',
          run.requestedBy ? 'manual, by ' : 'schedule',
          run.requestedBy ? bdi(run.requestedBy) : null,
        ),
        cell(
          'Error',
          run.error
            ? h(
                'details',
                { 'data-key': `run:${String(run.id)}` },
                h('summary', null, bdi(String(run.error).split('\n')[0] ?? '')),
                h('pre', null, String(run.error)),
              )
            : null,
        ),
      );
    // a sharded fire (parts, or one run per instance) shows as one fire with its parts
    const rows: HTMLElement[] = [];
    const groups = new Map<string, { head: Json; runs: Json[] }>();
    const order: Array<Json | { head: Json; runs: Json[] }> = [];
    for (const run of executions) {
      const shard = run.shard as Json | null | undefined;
      if (!shard) {
        order.push(run);
        continue;
      }
      const key = `${String(run.fireAt)}|${shard.each ? 'each' : String(shard.count)}`;
      let group = groups.get(key);
      if (!group) {
        group = { head: run, runs: [] };
        groups.set(key, group);
        order.push(group);
      }
      group.runs.push(run);
    }
    for (const item of order) {
      if (!('runs' in item)) {
        rows.push(runRow(item as Json));
        continue;
      }
      const { head, runs } = item as { head: Json; runs: Json[] };
      const shard = head.shard as Json;
      const counts: Record<string, number> = {};
      for (const run of runs) counts[String(run.status)] = (counts[String(run.status)] ?? 0) + 1;
      const summary = Object.entries(counts)
        .map(([status, n]) => `${n} ${status}`)
        .join(', ');
      const what = shard.each ? `${runs.length} instance(s)` : `${String(shard.count)} parts`;
      rows.push(
        h(
          'tr',
          { class: 'fire-group', 'data-fire': String(head.fireAt) },
          h(
            'td',
            { colspan: '7' },
            h('strong', null, 'Sharded fire '),
            time(head.fireAt as number, now),
            h('span', { class: 'muted' }, ` — ${what}: ${summary}`),
          ),
        ),
      );
      const sorted = [...runs].sort((a, b) =>
        shard.each
          ? String(a.instanceId).localeCompare(String(b.instanceId))
          : Number((a.shard as Json).index) - Number((b.shard as Json).index),
      );
      for (const run of sorted) rows.push(runRow(run));
    }
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
    const job = ctx.jobs().find((j) => j.name === name);
    if (!job)
      return h(
        'section',
        null,
        h('h1', null, bdi(name)),
        h('p', { class: 'warning' }, 'Unknown job.'),
      );
    const fires = ((job.nextFires as Json[] | undefined) ?? []).map((f) =>
      h(
        'li',
        typeof f.excluded === 'string' ? { class: 'excluded', 'data-excluded': f.excluded } : null,
        h('code', null, String(f.utc)),
        ' · ',
        String(f.local ?? ''),
        ' ',
        h('span', { class: 'muted' }, String(f.zone ?? '')),
        typeof f.excluded === 'string'
          ? h('span', { class: 'excluded-note' }, `excluded: ${f.excluded}`)
          : null,
      ),
    );
    const exclude = job.exclude as Json | null | undefined;
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
          await ctx.showHistory(name, (event.target as HTMLSelectElement).value, false);
        },
      },
      ...statuses.map((s) =>
        h(
          'option',
          { value: s, selected: (ctx.state().history?.status ?? '') === s },
          s === '' ? 'all statuses' : s,
        ),
      ),
    );
    return h(
      'section',
      null,
      h(
        'p',
        null,
        h('a', { href: '#/' }, '← Jobs'),
        ' · ',
        h(
          'a',
          { href: `#/audit/${encodeURIComponent(name)}`, id: 'job-audit' },
          'Audit of this job',
        ),
      ),
      h(
        'h1',
        null,
        bdi(name),
        ' ',
        job.paused ? badge('paused', 'paused') : badge('active', 'active'),
        job.drift ? badge('drift', 'drift') : null,
      ),
      job.drift
        ? h(
            'p',
            { class: 'warning', role: 'alert' },
            'Drift: live instances define this job differently; which instances define what:',
          )
        : null,
      definitionsTable(job),
      h(
        'dl',
        { class: 'facts' },
        h('dt', null, 'Trigger'),
        h('dd', null, h('code', null, String(job.trigger ?? '—'))),
        h('dt', null, 'Paused'),
        h(
          'dd',
          null,
          job.paused ? 'yes' : 'no',
          job.paused && job.pausedBy ? ', by ' : null,
          job.paused && job.pausedBy ? bdi(job.pausedBy) : null,
        ),
        h('dt', null, 'Last run'),
        h('dd', null, statusBadge(job.lastStatus), ' ', time(job.lastFinishedAt as number, now)),
        exclude ? h('dt', null, 'Excludes') : null,
        exclude
          ? h(
              'dd',
              { id: 'exclude' },
              h('code', null, String(exclude.description ?? '')),
              exclude.spec
                ? null
                : h(
                    'span',
                    { class: 'muted' },
                    ' (a custom calendar: only its instances know which fires it excludes; none is marked here)',
                  ),
            )
          : null,
        h('dt', null, 'Defined on'),
        h('dd', null, String(((job.definedBy as unknown[]) ?? []).length), ' live instance(s)'),
      ),
      ctx.actions(job),
      h('h2', null, 'Next fires'),
      fires.length ? h('ol', { class: 'fires' }, ...fires) : h('p', { class: 'muted' }, 'None.'),
      h('h2', null, 'History'),
      h('div', { class: 'toolbar' }, filter),
      historyTable(now),
      ctx.state().history?.next
        ? h(
            'button',
            {
              type: 'button',
              class: 'secondary',
              onclick: async () => {
                await ctx.showHistory(name, ctx.state().history?.status ?? '', true);
              },
            },
            'Older runs',
          )
        : null,
    );
  }

  return { jobsView, instancesView, jobView, badLinkView };
}

/** What {@link consoleViews} returns. */
export type ConsoleViews = ReturnType<typeof consoleViews>;
