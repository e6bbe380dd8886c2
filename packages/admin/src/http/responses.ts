import { isFleetcronError } from '@fleetcron/core';

/** The body of every error answer: a stable code, a message for people, the field if any. */
export interface ErrorBody {
  error: { code: string; message: string; field?: string };
}

/** Headers every answer carries, JSON or page: no sniffing, no framing, no referrer. */
export const BASE_HEADERS: Readonly<Record<string, string>> = {
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-resource-policy': 'same-origin',
};

/** A JSON answer that is never cached (fleet data changes every second). */
export function json(
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: {
      ...BASE_HEADERS,
      'content-type': 'application/json; charset=utf-8',
      'cache-control': 'no-store',
      ...headers,
    },
  });
}

/** A JSON error answer: `{ error: { code, message, field? } }`. */
export function jsonError(
  status: number,
  code: string,
  message: string,
  options: { field?: string | undefined; headers?: Record<string, string> } = {},
): Response {
  const error: ErrorBody['error'] = { code, message };
  if (options.field !== undefined) error.field = options.field;
  return json(status, { error }, options.headers);
}

/**
 * HTTP status for a fleetcron error code: input errors 400, unknown job or schedule 404, a stale
 * or taken schedule 409, a store without an audit log 501, backend down 503.
 */
export function statusOfCode(code: string): number {
  switch (code) {
    case 'INVALID_OPTION':
    case 'INVALID_CRON':
    case 'AMBIGUOUS_CRON_DIALECT':
    case 'INVALID_TRIGGER':
    case 'INVALID_CALENDAR':
    case 'UNKNOWN_TIMEZONE':
      return 400;
    case 'UNKNOWN_JOB':
    case 'UNKNOWN_SCHEDULE':
      return 404;
    case 'SCHEDULE_CONFLICT':
    case 'DUPLICATE_SCHEDULE':
      return 409;
    case 'BACKEND_UNAVAILABLE':
    case 'SCHEDULER_STOPPED':
      return 503;
    case 'AUDIT_NOT_KEPT':
      return 501;
    default:
      return 500;
  }
}

/**
 * The answer for an error thrown while serving: a `FleetcronError` keeps its code, message and
 * field; anything else is a 500 `INTERNAL` whose details go to `onError` only (never to the client).
 */
export function errorResponse(error: unknown, onError: (error: unknown) => void): Response {
  if (isFleetcronError(error)) {
    const status = statusOfCode(error.code);
    if (status === 500) onError(error);
    return jsonError(status, error.code, error.message, { field: error.field });
  }
  onError(error);
  return jsonError(500, 'INTERNAL', 'internal error; see the server log');
}

/** The methods the handler serves; any other gets 405. */
const SERVED_METHODS: readonly string[] = ['GET', 'HEAD', 'POST'];

/** `true` for GET, HEAD and POST. */
export function isServedMethod(method: string): boolean {
  return SERVED_METHODS.includes(method);
}

/** 405 `METHOD_NOT_ALLOWED` with `Allow: GET, HEAD, POST` (TRACE, PUT, OPTIONS...). */
export function methodNotAllowed(method: string): Response {
  return jsonError(
    405,
    'METHOD_NOT_ALLOWED',
    `${method.slice(0, 32)} is not allowed; the admin handler serves GET, HEAD and POST.`,
    { headers: { allow: SERVED_METHODS.join(', ') } },
  );
}
