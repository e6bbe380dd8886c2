import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AdminHandler } from './handler.js';

/** A node:http request as Express and Fastify (`request.raw`) pass it. */
export type NodeRequest = IncomingMessage & { originalUrl?: string; body?: unknown };

/** A node:http listener; also an Express middleware (it never calls `next`). */
export type NodeListener = (request: NodeRequest, response: ServerResponse, next?: unknown) => void;

const MAX_UPLOAD_BYTES = 64 * 1024;

class BodyTooLarge extends Error {}

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
  const url = new URL(
    request.originalUrl ?? request.url ?? '/',
    `${encrypted ? 'https' : 'http'}://${host}`,
  );
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
 * `listener(request.raw, reply.raw)` in Fastify. Bodies over 64 KiB get 413. Never throws and
 * never leaves a rejected promise: a client that goes away only ends its own response.
 */
export function toNodeListener(handler: AdminHandler): NodeListener {
  return (request, response) => {
    request.on('error', () => {});
    response.on('error', () => {});
    void (async () => {
      try {
        const body = await readBody(request);
        await send(response, await handler(toRequest(request, body)));
      } catch (error) {
        if (error instanceof BodyTooLarge) {
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
