import { createServer, type Server } from 'node:http';
import { isIP } from 'node:net';
import { type AdminToken, createAdminHandler, toNodeListener } from '@fleetcron/admin';
import { type ParsedCommand, UsageError } from '../args.js';
import type { Backend } from '../connect.js';
import { EXIT, type ExitCode } from '../exit-codes.js';
import type { CliIo } from '../io.js';
import { readTokensFile } from '../tokens-file.js';

/** `--grace` default: how long a stop waits for open requests before closing them, ms. */
export const DEFAULT_GRACE_MS = 5000;

function graceOf(value: string | undefined): number {
  if (value === undefined) return DEFAULT_GRACE_MS;
  const ms = Number(value);
  if (!Number.isInteger(ms) || ms < 0 || ms > 600_000) {
    throw new UsageError(
      `--grace must be an integer from 0 to 600000 ms, got ${JSON.stringify(value)}`,
    );
  }
  return ms;
}

/**
 * The host names the console answers: `--allowed-hosts a,b` and the `--host` it binds when that is
 * a name (loopback names and IP literals are always allowed by the handler).
 */
function allowedHostsOf(list: string | undefined, host: string): string[] {
  const names = (list ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  if (isIP(host) === 0 && !names.includes(host)) names.push(host);
  return names;
}

/**
 * Stops `server`: no new connections, idle ones closed now, and every connection still open
 * after `graceMs` (a client holding a request or a body open) destroyed; resolves once closed.
 */
async function stopWithin(server: Server, graceMs: number): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  const timer = setTimeout(() => server.closeAllConnections(), graceMs);
  await closed;
  clearTimeout(timer);
}

/** `--port`: 0 to 65535 (0 picks a free port), default 8080. */
function portOf(value: string | undefined): number {
  if (value === undefined) return 8080;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new UsageError(`--port must be an integer from 0 to 65535, got ${JSON.stringify(value)}`);
  }
  return port;
}

/**
 * `fleetcron serve`: the admin console and API on node:http until SIGINT or SIGTERM, then stops
 * within `--grace` ms even while clients hold requests open. Tokens come from `--tokens-file`
 * (named, one per operator), `--token` / `--read-token` or `FLEETCRON_TOKEN` /
 * `FLEETCRON_READ_TOKEN` (the environment and the file keep them out of `ps`).
 */
export async function serveCommand(
  backend: Backend,
  { options }: ParsedCommand,
  io: CliIo,
): Promise<ExitCode> {
  const tokens: AdminToken[] = [];
  const write = options.token ?? io.env.FLEETCRON_TOKEN;
  const read = options['read-token'] ?? io.env.FLEETCRON_READ_TOKEN;
  if (write) tokens.push({ token: write, role: 'write', name: 'token' });
  if (read) tokens.push({ token: read, role: 'read', name: 'read-token' });
  if (options['tokens-file'] !== undefined) tokens.push(...readTokensFile(options['tokens-file']));
  if (tokens.length === 0) {
    throw new UsageError(
      'serve needs --tokens-file or --token (or FLEETCRON_TOKEN): the console has no anonymous access',
    );
  }
  const port = portOf(options.port);
  const graceMs = graceOf(options.grace);
  const host = options.host ?? '127.0.0.1';
  const basePath = options['base-path'] ?? '';
  const handler = createAdminHandler({
    fleet: backend.fleet,
    tokens,
    basePath,
    allowedHosts: allowedHostsOf(options['allowed-hosts'], host),
    ...(options['public-origin'] === undefined ? {} : { publicOrigin: options['public-origin'] }),
    title: `${backend.kind} fleet`,
    onError: (error) => io.err(`fleetcron serve: ${(error as Error)?.message ?? String(error)}`),
    onAction: (r) =>
      io.out(
        `${new Date(r.at).toISOString()} ${r.by} ${r.action} ${JSON.stringify(r.job)}${r.note === undefined ? '' : ` note ${JSON.stringify(r.note)}`}`,
      ),
  });
  const server = createServer(toNodeListener(handler));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address();
  const actualPort = typeof address === 'object' && address ? address.port : port;
  const shownHost = host.includes(':') ? `[${host}]` : host;
  io.out(`fleetcron console on http://${shownHost}:${actualPort}${basePath}/ (${backend.kind})`);
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  await stopWithin(server, graceMs);
  return EXIT.ok;
}
