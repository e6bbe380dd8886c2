import { createServer } from 'node:http';
import { type AdminToken, createAdminHandler, toNodeListener } from '@fleetcron/admin';
import { type ParsedCommand, UsageError } from '../args.js';
import type { Backend } from '../connect.js';
import { EXIT, type ExitCode } from '../exit-codes.js';
import type { CliIo } from '../io.js';

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
 * `fleetcron serve`: the admin console and API on node:http until SIGINT or SIGTERM. Tokens come
 * from `--token` / `--read-token` or `FLEETCRON_TOKEN` / `FLEETCRON_READ_TOKEN` (the environment
 * keeps them out of `ps`).
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
  if (tokens.length === 0) {
    throw new UsageError(
      'serve needs --token (or FLEETCRON_TOKEN): the console has no anonymous access',
    );
  }
  const port = portOf(options.port);
  const host = options.host ?? '127.0.0.1';
  const basePath = options['base-path'] ?? '';
  const handler = createAdminHandler({
    fleet: backend.fleet,
    tokens,
    basePath,
    title: `${backend.kind} fleet`,
    onError: (error) => io.err(`fleetcron serve: ${(error as Error)?.message ?? String(error)}`),
    onAction: (r) =>
      io.out(`${new Date(r.at).toISOString()} ${r.by} ${r.action} ${JSON.stringify(r.job)}`),
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
  await new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeAllConnections();
  return EXIT.ok;
}
