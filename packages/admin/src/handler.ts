import {
  type Clock,
  InvalidOptionError,
  type JsonValue,
  MAX_RUN_REQUEST_DATA_BYTES,
  realClock,
} from '@fleetcron/core';
import type { AdminActionRecord, JobAction } from './api/audit.js';
import { type AdminAuditFleet, getAudit } from './api/audit-route.js';
import {
  type AdminJobFleet,
  getFleet,
  getHistory,
  getInstances,
  getJob,
  getJobs,
  getRunRequest,
  postAction,
} from './api/routes.js';
import {
  type AdminScheduleFleet,
  changeSchedule,
  createSchedule,
  getSchedule,
  listSchedules,
  MAX_SCHEDULE_BODY_BYTES,
  SCHEDULE_TAILS,
} from './api/schedule-routes.js';
import { CONSOLE_SCRIPT, CONSOLE_STYLES, type ConsoleAsset, consolePage } from './console/page.js';
import { type AllowedHosts, createHostCheck, parsePublicOrigin } from './http/allowed-hosts.js';
import { type AdminAuthOptions, type AdminPrincipal, createAuthenticator } from './http/auth.js';
import { crossSiteProblem } from './http/cross-site.js';
import { createFailedAuthLimit, type FailedAuthLimitOptions } from './http/failed-auth-limit.js';
import { noteOf, readJsonObject } from './http/json-body.js';
import {
  BASE_HEADERS,
  errorResponse,
  isServedMethod,
  json,
  jsonError,
  methodNotAllowed,
} from './http/responses.js';
import { CONSOLE_CSP } from './http/security-headers.js';

export { MAX_NOTE_LENGTH } from './http/json-body.js';

/**
 * The part of core's `FleetClient` the admin handler uses (pass a `FleetClient`): the fleet view,
 * history, pause/resume/run, and the stored-schedule operations.
 */
export type AdminFleet = AdminJobFleet & AdminScheduleFleet & AdminAuditFleet;

/** What the server knows about the client beyond the request (node:http: the socket). */
export interface AdminClientInfo {
  /** The client's IP address, the key of the refused-sign-in limit. */
  address?: string;
}

/**
 * A web-standard request handler: what `createAdminHandler` returns. Pass `client.address` (the
 * peer's IP, `toNodeListener` does) so refused sign-ins are limited per address; without it they
 * are not limited (one count shared by every client would let anyone lock all operators out).
 */
export type AdminHandler = (request: Request, client?: AdminClientInfo) => Promise<Response>;

/** Options of {@link createAdminHandler}. Authentication (`token`, `tokens` or `authorize`) is required. */
export interface AdminHandlerOptions extends AdminAuthOptions {
  /** The fleet to show and steer: a `FleetClient` from `@fleetcron/core`. */
  fleet: AdminFleet;
  /** Path the handler is mounted at, e.g. `/admin`. Default `''` (the root). */
  basePath?: string;
  /** Shown in the page title and header. Default `fleet`. */
  title?: string;
  /** How often the console polls the API, ms (1 000 to 3 600 000). Default 5 000. */
  refreshMs?: number;
  /** Called with unexpected errors (answered as 500 `INTERNAL`). Default: `console.error`. */
  onError?: (error: unknown) => void;
  /**
   * Called after every successful mutation, for an audit log. The Store keeps who paused a job
   * and who asked for a run, but a resume clears `pausedBy`: this callback sees all three.
   * Default: one `console.info` line. A throw here is passed to `onError`, never to the client.
   */
  onAction?: (record: AdminActionRecord) => void;
  /**
   * Host names the handler answers (the `Host` header), against DNS rebinding: a page on another
   * site that makes its own name resolve to this server is refused (400 `HOST_NOT_ALLOWED`).
   * `localhost`, `*.localhost` and IP literals are always allowed (a rebinding needs a name);
   * add the names people type, e.g. `['ops.example.com']`, or `'.example.com'` for every
   * subdomain. `'any'` turns the check off (only behind a proxy that checks `Host`). Default `[]`.
   */
  allowedHosts?: AllowedHosts;
  /**
   * The origin browsers use, when a proxy in front rewrites `Host` (nginx does by default), e.g.
   * `https://ops.example.com`: mutations whose `Origin` is this origin are accepted, and its host
   * is allowed. Default: none (the origin must match the request's own `Host`).
   */
  publicOrigin?: string;
  /**
   * Refused sign-ins (401) allowed per client address before it is answered 429 for the rest of
   * the window, or `false` for no limit. Default `{ attempts: 10, windowMs: 60000, maxAddresses: 10000 }`.
   */
  failedAuthLimit?: FailedAuthLimitOptions | false;
  /**
   * The client address that keys `failedAuthLimit`, from the request and the peer address the
   * server passed. Behind a reverse proxy every request comes from the proxy: read the header the
   * proxy sets, e.g. `(request, peer) => request.headers.get('x-real-ip') ?? peer` (only when
   * clients cannot reach the handler around the proxy). Default: the peer address.
   */
  clientAddress?: (request: Request, peer: string | undefined) => string | undefined;
  /** Time source of `failedAuthLimit` (tests pass a `FakeClock`). Default: the real clock. */
  clock?: Clock;
}

/** Largest body of a job mutation (pause, resume), bytes. */
const MAX_BODY_BYTES = 4096;
/** Largest body of a run request: its `data` (at most 64 KiB as core checks it) and a note. */
const MAX_RUN_BODY_BYTES = MAX_RUN_REQUEST_DATA_BYTES + MAX_BODY_BYTES;
const ACTIONS: readonly string[] = ['pause', 'resume', 'run'];

function normalizeBase(basePath: unknown): string {
  if (basePath === undefined || basePath === '' || basePath === '/') return '';
  if (typeof basePath !== 'string' || !basePath.startsWith('/') || /[?#\s]/.test(basePath)) {
    throw new InvalidOptionError(
      'basePath',
      `must be a path starting with "/" such as "/admin", got ${JSON.stringify(basePath)}.`,
    );
  }
  return basePath.replace(/\/+$/, '');
}

function checkRefresh(refreshMs: unknown): number {
  if (refreshMs === undefined) return 5000;
  if (
    typeof refreshMs !== 'number' ||
    !Number.isInteger(refreshMs) ||
    refreshMs < 1000 ||
    refreshMs > 3_600_000
  ) {
    throw new InvalidOptionError(
      'refreshMs',
      `must be an integer from 1000 to 3600000 ms, got ${String(refreshMs)}.`,
    );
  }
  return refreshMs;
}

function serveAsset(request: Request, asset: ConsoleAsset): Response {
  const headers = {
    ...BASE_HEADERS,
    'content-type': asset.contentType,
    etag: asset.etag,
    'cache-control': 'no-cache',
  };
  if (request.headers.get('if-none-match') === asset.etag)
    return new Response(null, { status: 304, headers });
  return new Response(request.method === 'HEAD' ? null : asset.body, { status: 200, headers });
}

/**
 * Splits `/api/<collection>/<encoded name>/<tail>` into its parts; `null` for other paths.
 * @throws InvalidOptionError (field `field`) for a name that is not valid percent-encoding.
 */
function itemRoute(
  rest: string,
  collection: 'jobs' | 'schedules' | 'run-requests',
  field: string,
): { name: string; tail: string | null } | null {
  const match = new RegExp(`^/api/${collection}/([^/]+)(?:/([^/]+))?/?$`).exec(rest);
  if (!match) return null;
  let name: string;
  try {
    name = decodeURIComponent(match[1] as string);
  } catch {
    throw new InvalidOptionError(field, `is not a valid percent-encoded ${field} name.`);
  }
  return { name, tail: match[2] ?? null };
}

/**
 * Creates the admin handler: a web-standard `(Request) => Promise<Response>` serving the JSON
 * API under `<basePath>/api/` and the web console at `<basePath>/`. Mount it in any server
 * (see `toNodeListener` for node:http, Express and Fastify; Hono and other fetch-style servers
 * call it directly).
 *
 * API (all need authentication; answers are JSON, errors `{ error: { code, message, field? } }`):
 * `GET api/me`, `GET api/fleet`, `GET api/instances`, `GET api/jobs`, `GET api/jobs/:name`,
 * `GET api/jobs/:name/history?limit=&cursor=&status=`, `GET api/run-requests/:id` (a run
 * request's state and its run), and the mutations (write role, JSON body plus the
 * `x-fleetcron-request` header) `POST api/jobs/:name/pause`, `/resume`, `/run` (body `data`: the
 * run's `ctx.request.data`).
 * Stored schedules: `GET api/schedules?handler=&limit=&cursor=`, `GET api/schedules/:id`, and
 * the mutations `POST api/schedules` (create), `POST api/schedules/:id/update` (with the
 * `expectedVersion` read: a stale one answers 409 `SCHEDULE_CONFLICT`), `/enable`, `/disable`,
 * `/remove`; bad input answers 400 with core's code and the field. Every mutation's body may
 * carry a `note` (at most 1,000 characters), kept with who asked in the store's audit log, read
 * with `GET api/audit?job=&action=&before=&cursor=&limit=` (501 `AUDIT_NOT_KEPT` without one).
 *
 * @throws InvalidOptionError for bad options, including no authentication at all (field `token`).
 */
export function createAdminHandler(options: AdminHandlerOptions): AdminHandler {
  if (typeof options !== 'object' || options === null) {
    throw new InvalidOptionError('options', 'must be an object with at least { fleet, token }.');
  }
  const fleet = options.fleet;
  if (typeof fleet?.fleet !== 'function' || typeof fleet.history !== 'function') {
    throw new InvalidOptionError(
      'fleet',
      'must be a FleetClient from @fleetcron/core: new FleetClient({ store }).',
    );
  }
  const authenticate = createAuthenticator(options);
  const publicOrigin = parsePublicOrigin(options.publicOrigin);
  const hostAllowed = createHostCheck(options.allowedHosts, publicOrigin?.hostname ?? null);
  const failedAuth = createFailedAuthLimit(options.failedAuthLimit, options.clock ?? realClock);
  const clientAddress = options.clientAddress ?? ((_request: Request, peer?: string) => peer);
  if (typeof clientAddress !== 'function') {
    throw new InvalidOptionError(
      'clientAddress',
      'must be a function (request, peer) => address, e.g. reading the x-real-ip your proxy sets.',
    );
  }
  const base = normalizeBase(options.basePath);
  const refreshMs = checkRefresh(options.refreshMs);
  const title = typeof options.title === 'string' && options.title !== '' ? options.title : 'fleet';
  const onError =
    options.onError ?? ((error: unknown) => console.error('[fleetcron admin]', error));
  const page = consolePage({ base, title, refreshMs });
  const audit =
    options.onAction ??
    ((r: AdminActionRecord) =>
      console.info(
        `[fleetcron admin] ${r.by} ${r.action} ${JSON.stringify(r.job)}${r.note === undefined ? '' : ` note ${JSON.stringify(r.note)}`}`,
      ));
  const onAction = (record: AdminActionRecord): void => {
    try {
      audit(record);
    } catch (error) {
      onError(error);
    }
  };

  async function api(
    request: Request,
    url: URL,
    rest: string,
    address: string | undefined,
  ): Promise<Response> {
    // No address, no limit: one shared count would let anyone lock every operator out.
    const limit = address === undefined ? null : failedAuth;
    const waitMs = limit?.blockedFor(address as string) ?? 0;
    if (waitMs > 0) {
      return jsonError(
        429,
        'TOO_MANY_FAILED_SIGN_INS',
        `too many refused sign-ins from this address; try again in ${Math.ceil(waitMs / 1000)} s.`,
        { headers: { 'retry-after': String(Math.ceil(waitMs / 1000)) } },
      );
    }
    const who: AdminPrincipal | null = await authenticate(request);
    if (who === null) {
      limit?.fail(address as string);
      return jsonError(
        401,
        'UNAUTHENTICATED',
        'send Authorization: Bearer <token> (or sign in to the console).',
        {
          headers: { 'www-authenticate': 'Bearer realm="fleetcron"' },
        },
      );
    }
    const method = request.method;
    /** Why a mutation is refused (403), or `null`: the cross-site checks, then the role. */
    const refusal = (what: string): Response | null => {
      const problem = crossSiteProblem(request, url, publicOrigin);
      if (problem) return jsonError(403, 'CROSS_SITE_REFUSED', problem);
      if (who.role === 'write') return null;
      return jsonError(403, 'FORBIDDEN', `the ${who.role} role cannot ${what}; use a write token.`);
    };
    if (method === 'GET' || method === 'HEAD') {
      if (rest === '/api/me') return json(200, { role: who.role, name: who.name });
      if (rest === '/api/fleet') return getFleet(fleet);
      if (rest === '/api/instances') return getInstances(fleet);
      if (rest === '/api/jobs') return getJobs(fleet);
      if (rest === '/api/schedules') return listSchedules(fleet, url.searchParams);
      if (rest === '/api/audit') {
        const backend = async () => (await fleet.fleet()).backends.store;
        return getAudit(fleet, backend, url.searchParams);
      }
      const route = itemRoute(rest, 'jobs', 'job');
      if (route && route.tail === null) return getJob(fleet, route.name);
      if (route && route.tail === 'history') return getHistory(fleet, route.name, url.searchParams);
      const runRequest = itemRoute(rest, 'run-requests', 'id');
      if (runRequest && runRequest.tail === null) return getRunRequest(fleet, runRequest.name);
      const schedule = itemRoute(rest, 'schedules', 'id');
      if (schedule && schedule.tail === null) return getSchedule(fleet, schedule.name);
    } else if (method === 'POST') {
      const route = itemRoute(rest, 'jobs', 'job');
      if (route?.tail && ACTIONS.includes(route.tail)) {
        const refused = refusal(`${route.tail} jobs`);
        if (refused) return refused;
        const run = route.tail === 'run';
        const body = await readJsonObject(request, run ? MAX_RUN_BODY_BYTES : MAX_BODY_BYTES);
        const data = run && body.data !== undefined ? (body.data as JsonValue) : undefined;
        return postAction(
          fleet,
          route.name,
          route.tail as JobAction,
          who,
          onAction,
          noteOf(body),
          data,
        );
      }
      const mutation = { fleet, who, onAction };
      if (rest === '/api/schedules') {
        const refused = refusal('create schedules');
        if (refused) return refused;
        return createSchedule(mutation, await readJsonObject(request, MAX_SCHEDULE_BODY_BYTES));
      }
      const schedule = itemRoute(rest, 'schedules', 'id');
      if (schedule?.tail && SCHEDULE_TAILS.includes(schedule.tail)) {
        const refused = refusal(`${schedule.tail} schedules`);
        if (refused) return refused;
        const body = await readJsonObject(request, MAX_SCHEDULE_BODY_BYTES);
        return changeSchedule(mutation, schedule.name, schedule.tail, body);
      }
    }
    return jsonError(404, 'NOT_FOUND', `no API route ${method} ${rest}`);
  }

  return async (request: Request, client?: AdminClientInfo): Promise<Response> => {
    try {
      if (!isServedMethod(request.method)) return methodNotAllowed(request.method);
      const url = new URL(request.url);
      if (!hostAllowed(url.hostname)) {
        return jsonError(
          400,
          'HOST_NOT_ALLOWED',
          `Host ${JSON.stringify(url.hostname)} is not allowed (DNS-rebinding guard): add it to allowedHosts (fleetcron serve --allowed-hosts), or set publicOrigin when a proxy rewrites Host.`,
          { field: 'allowedHosts' },
        );
      }
      const path = url.pathname;
      if (path !== base && !path.startsWith(`${base}/`)) {
        return jsonError(404, 'NOT_FOUND', `not under the admin base path ${base || '/'}`);
      }
      const rest = path.slice(base.length) || '/';
      if (rest.startsWith('/api/') || rest === '/api')
        return await api(request, url, rest, clientAddress(request, client?.address));
      if (request.method !== 'GET' && request.method !== 'HEAD') {
        return jsonError(405, 'METHOD_NOT_ALLOWED', `${request.method} is not allowed on ${path}`, {
          headers: { allow: 'GET, HEAD' },
        });
      }
      if (rest === '/assets/console.js') return serveAsset(request, CONSOLE_SCRIPT);
      if (rest === '/assets/console.css') return serveAsset(request, CONSOLE_STYLES);
      if (rest === '/' || rest === '/index.html') {
        return new Response(request.method === 'HEAD' ? null : page, {
          status: 200,
          headers: {
            ...BASE_HEADERS,
            'content-type': 'text/html; charset=utf-8',
            'content-security-policy': CONSOLE_CSP,
            'cache-control': 'no-store',
          },
        });
      }
      return jsonError(404, 'NOT_FOUND', `nothing at ${path}`);
    } catch (error) {
      return errorResponse(error, onError);
    }
  };
}
