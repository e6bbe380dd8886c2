import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { waitFor } from '../wait.js';

/** One request an {@link HttpReceiver} got. */
export interface ReceivedRequest {
  /** HTTP method, e.g. `POST`. */
  method: string;
  /** Path and query, e.g. `/hook?x=1`. */
  path: string;
  /** Request headers (lower-case names). */
  headers: IncomingHttpHeaders;
  /** The body as UTF-8 text. */
  body: string;
  /** When the body was complete, epoch ms. */
  receivedAt: number;
  /** What the receiver did: the status it answered, or `hung` (never answered). */
  answer: number | 'hung';
}

/** What an {@link HttpReceiver} does with a request it got. */
export type HttpAnswer =
  /** Answer this status, with an optional body. */
  | { status: number; body?: string }
  /** Never answer: the request stays open until the client gives up or the receiver closes. */
  | 'hang';

/** Options of {@link startHttpReceiver}. */
export interface HttpReceiverOptions {
  /**
   * Decides the answer of each request that no `failNext` / `hangNext` claimed. Default: 200.
   * Use it to check a signature on the receiver's side and answer 401 when it is wrong.
   */
  respond?: (request: ReceivedRequest) => HttpAnswer;
}

/**
 * A real HTTP server on a free loopback port that records every request, for testing webhooks.
 * It can be told to fail the next requests with a status or to hang them.
 */
export interface HttpReceiver {
  /** Base URL, e.g. `http://127.0.0.1:39123`. */
  readonly url: string;
  /** Every request so far, in arrival order (hung ones included). */
  readonly requests: readonly ReceivedRequest[];
  /** Answers the next `n` requests with `status` (default 503). */
  failNext(n: number, status?: number): void;
  /** Leaves the next `n` requests unanswered (they hang until the client aborts). */
  hangNext(n: number): void;
  /** Resolves once at least `n` requests arrived; rejects after `timeoutMs` (default 10 000). */
  waitForRequests(n: number, timeoutMs?: number): Promise<readonly ReceivedRequest[]>;
  /** Stops listening and destroys open connections (hung requests included). */
  close(): Promise<void>;
}

/** Starts an {@link HttpReceiver} on 127.0.0.1 and a port the kernel picks. */
export async function startHttpReceiver(options: HttpReceiverOptions = {}): Promise<HttpReceiver> {
  const requests: ReceivedRequest[] = [];
  const planned: HttpAnswer[] = [];
  const sockets = new Set<Socket>();
  const respond = options.respond ?? (() => ({ status: 200 }));

  const answer = (res: ServerResponse, request: ReceivedRequest, decided: HttpAnswer): void => {
    if (decided === 'hang') {
      request.answer = 'hung';
      return;
    }
    request.answer = decided.status;
    res.writeHead(decided.status, { 'content-type': 'text/plain' });
    res.end(decided.body ?? '');
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('error', () => {});
    req.on('end', () => {
      const request: ReceivedRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        receivedAt: Date.now(),
        answer: 200,
      };
      requests.push(request);
      let decided = planned.shift();
      if (decided === undefined) {
        try {
          decided = respond(request);
        } catch (error) {
          decided = { status: 500, body: String(error) };
        }
      }
      answer(res, request, decided);
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    failNext(n, status = 503) {
      for (let i = 0; i < n; i++) planned.push({ status });
    },
    hangNext(n) {
      for (let i = 0; i < n; i++) planned.push('hang');
    },
    waitForRequests(n, timeoutMs = 10_000) {
      return waitFor(() => requests.length >= n && requests, {
        timeoutMs,
        intervalMs: 10,
        message: () => `${n} requests at the HTTP receiver (got ${requests.length})`,
      });
    },
    close() {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
