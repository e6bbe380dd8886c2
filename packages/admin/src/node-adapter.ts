import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AdminHandler } from './handler.js';
import { isServedMethod, methodNotAllowed } from './http/responses.js';

/** A node:http request as Express and Fastify (`request.raw`) pass it. */
export type NodeRequest = IncomingMessage & { originalUrl?: string; body?: unknown };

/** A node:http listener; also an Express middleware (it never calls `next`). */
export type NodeListener = (request: NodeRequest, response: ServerResponse, next?: unknown) => void;

/** Largest request body read, bytes: a stored schedule's `data` alone may be 64 KiB. */
const MAX_UPLOAD_BYTES = 128 * 1024;

class BodyTooLarge extends Error {}
class BadHost extends Error {}

/** A `Host` header value: a name or IPv4 address, or a bracketed IPv6 address, and a port. */
const HOST_HEADER = /^(\[[0-9a-f:.]+\]|[a-z0-9._~!$&'()*+,;=%-]+)(:\d{1,5})?$/i;

async function readBody(request: NodeRequest): Promise<Buffer | undefined> {
  if (request.method === 'GET' || request.method === 'HEAD') return undefined;
  // A body parser in front of us (express.json()) already read the stream: use what it parsed.
  if (request.readableEnded) {
    return request.body === undefined ? undefined : Buffer.from(JSON.stringify(request.body));
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > MAX_UPLOAD_BYTES) throw new BodyTooLarge();
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

function toRequest(request: NodeRequest, body: Buffer | undefined): Request {
  const encrypted = (request.socket as { encrypted?: boolean }).encrypted === true;
  const host = request.headers.host ?? 'localhost';
  if (!HOST_HEADER.test(host)) throw new BadHost();
  // The request target is a path (`/admin/api`), or an absolute URL a proxy may send: only its
  // path and query are used, the host is always the `Host` header's (checked by the handler).
  let target = request.originalUrl ?? request.url ?? '/';
  if (!target.startsWith('/')) {
    try {
      const absolute = new URL(target);
      target = absolute.pathname + absolute.search;
    } catch {
      target = '/';
    }
  }
  let url: URL;
  try {
    url = new URL(`${encrypted ? 'https' : 'http'}://${host}${target}`);
  } catch {
    throw new BadHost();
  }
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
  }
  return new Request(url, {
    method: request.method ?? 'GET',
    headers,
    body: body === undefined ? null : new Uint8Array(body),
  });
}

async function send(response: ServerResponse, answer: Response): Promise<void> {
  response.statusCode = answer.status;
  answer.headers.forEach((value, name) => {
    response.setHeader(name, value);
  });
  response.end(Buffer.from(await answer.arrayBuffer()));
}

function fail(response: ServerResponse, status: number, code: string, message: string): void {
  if (response.headersSent) {
    response.destroy();
    return;
  }
  response.statusCode = status;
  response.setHeader('content-type', 'application/json; charset=utf-8');
  response.end(JSON.stringify({ error: { code, message } }));
}

/**
 * Adapts the web-standard handler to node:http: `http.createServer(toNodeListener(handler))`,
 * `app.use('/admin', toNodeListener(handler))` in Express (it reads `originalUrl`, so the
 * handler sees the full path; give it `basePath: '/admin'`), or `reply.hijack()` then
 * `listener(request.raw, reply.raw)` in Fastify. Bodies over 128 KiB get 413, a malformed `Host`
 * 400, methods other than GET, HEAD and POST 405. The peer's address is passed to the handler
 * (the refused-sign-in limit's key). Never throws and
 * never leaves a rejected promise: a client that goes away only ends its own response.
 */
export function toNodeListener(handler: AdminHandler): NodeListener {
  return (request, response) => {
    request.on('error', () => {});
    response.on('error', () => {});
    void (async () => {
      try {
        // TRACE, CONNECT and TRACK cannot even become a web Request: answer them here.
        if (!isServedMethod(request.method ?? '')) {
          request.resume();
          await send(response, methodNotAllowed(request.method ?? ''));
          return;
        }
        const body = await readBody(request);
        const address = request.socket.remoteAddress;
        await send(
          response,
          await handler(toRequest(request, body), address === undefined ? {} : { address }),
        );
      } catch (error) {
        if (error instanceof BadHost) {
          fail(
            response,
            400,
            'INVALID_HOST',
            'the Host header is not a valid host[:port]; send the name or address of this server',
          );
        } else if (error instanceof BodyTooLarge) {
          fail(
            response,
            413,
            'BODY_TOO_LARGE',
            `request bodies are limited to ${MAX_UPLOAD_BYTES} bytes`,
          );
        } else {
          fail(response, 500, 'INTERNAL', 'internal error');
        }
      }
    })();
  };
}
