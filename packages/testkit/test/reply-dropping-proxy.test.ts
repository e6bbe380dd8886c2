import { connect, type Socket } from 'node:net';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { InvalidOptionError } from '../src/errors.js';
import { uniquePrefix } from '../src/isolation.js';
import { ReplyDroppingProxy } from '../src/reply-dropping-proxy.js';
import { waitFor } from '../src/wait.js';

// The proxy against the shared real servers: each way of losing a reply loses exactly the reply
// it names, after the server applied the request.

const proxies: ReplyDroppingProxy[] = [];
const closers: (() => unknown)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  for (const proxy of proxies.splice(0)) await proxy.close();
});

async function startProxy(
  ...args: Parameters<typeof ReplyDroppingProxy.start>
): Promise<ReplyDroppingProxy> {
  const proxy = await ReplyDroppingProxy.start(...args);
  proxies.push(proxy);
  return proxy;
}

/** A pg client on `url`, ended after the test. */
async function pgClient(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => {}); // the cut connection
  await client.connect();
  closers.push(() => client.end().catch(() => {}));
  return client;
}

/** A raw TCP connection to `port` that records every byte it receives and when it closed. */
async function rawConnection(port: number): Promise<{
  socket: Socket;
  received: () => string;
  closed: () => boolean;
}> {
  const socket = connect({ host: '127.0.0.1', port });
  const chunks: Buffer[] = [];
  let closed = false;
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  socket.on('error', () => {});
  socket.on('close', () => {
    closed = true;
  });
  closers.push(() => socket.destroy());
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  return { socket, received: () => Buffer.concat(chunks).toString(), closed: () => closed };
}

describe('ReplyDroppingProxy', () => {
  it('bytes: the next reply is lost and its connection cut, the command applied (Redis)', async () => {
    const redisUrl = inject('fleetcronRedisUrl');
    const proxy = await startProxy(redisUrl);
    expect(proxy.url).toBe(`redis://127.0.0.1:${proxy.port}`);
    const direct = new Redis(redisUrl);
    closers.push(() => direct.disconnect());
    const key = uniquePrefix('proxy-bytes');
    const raw = await rawConnection(proxy.port);
    raw.socket.write('PING\r\n');
    await waitFor(() => raw.received() === '+PONG\r\n', { message: 'PONG through the proxy' });
    proxy.dropNextReply = true;
    raw.socket.write(`SET ${key} applied\r\n`);
    await waitFor(raw.closed, { message: 'the connection cut' });
    expect(raw.received(), 'nothing of the SET reply got through').toBe('+PONG\r\n');
    expect(proxy.dropped).toBe(1);
    expect(proxy.dropNextReply, 'cleared once used').toBe(false);
    expect(await direct.get(key), 'the command ran').toBe('applied');
  });

  it('postgres: the answer to the next statement is held to its ReadyForQuery, then cut; the statement committed', async () => {
    const databaseUrl = inject('fleetcronPostgresUrl');
    const table = `${uniquePrefix('proxy_pg').replace(/[^a-z0-9_]/gi, '_')}`;
    const admin = await pgClient(databaseUrl);
    await admin.query(`CREATE TABLE "${table}" (n int)`);
    closers.push(() => admin.query(`DROP TABLE IF EXISTS "${table}"`));
    const proxy = await startProxy(databaseUrl, { protocol: 'postgres' });
    expect(new URL(proxy.url).pathname, 'database kept').toBe(new URL(databaseUrl).pathname);
    const client = await pgClient(proxy.url);
    const big = await client.query('SELECT repeat($1, 1000) AS s FROM generate_series(1, 500)', [
      'x',
    ]);
    expect(big.rows.length, 'a long answer (many chunks) passes whole').toBe(500);
    proxy.dropNextReply = true;
    // One implicit transaction whose answer comes in several flushes: a proxy that cut at the
    // first one would make the server's later writes fail and the transaction roll back.
    const statements = [
      `SELECT repeat('x', 200000)`,
      'SELECT pg_sleep(0.2)',
      `SELECT repeat('y', 200000)`,
      `INSERT INTO "${table}" VALUES (1), (2)`,
    ];
    const lost = await client.query(statements.join('; ')).then(
      () => 'answered',
      (error: Error) => error.message,
    );
    expect(lost).toMatch(/terminated|closed|ECONNRESET/i);
    expect(proxy.dropped).toBe(1);
    const { rows } = await admin.query(`SELECT count(*)::int AS n FROM "${table}"`);
    expect(rows[0].n, 'the statement committed before the cut').toBe(2);
    const again = await pgClient(proxy.url);
    expect((await again.query('SELECT 1 AS one')).rows[0].one, 'next replies pass').toBe(1);
    expect(proxy.dropped).toBe(1);
  });

  it("postgres: a client that asks for TLS gets the server's one-byte answer, then its startup", async () => {
    const databaseUrl = new URL(inject('fleetcronPostgresUrl'));
    const proxy = await startProxy(databaseUrl.href, { protocol: 'postgres' });
    const raw = await rawConnection(proxy.port);
    const sslRequest = Buffer.alloc(8);
    sslRequest.writeInt32BE(8, 0);
    sslRequest.writeInt32BE(80877103, 4);
    raw.socket.write(sslRequest);
    await waitFor(() => raw.received().length > 0, { message: 'the answer to SSLRequest' });
    expect(raw.received(), 'the test server runs without TLS').toBe('N');
    const parameters = Buffer.from(
      `user\0${decodeURIComponent(databaseUrl.username)}\0database\0${databaseUrl.pathname.slice(1)}\0\0`,
    );
    const startup = Buffer.alloc(8);
    startup.writeInt32BE(8 + parameters.length, 0);
    startup.writeInt32BE(196608, 4); // protocol 3.0
    raw.socket.write(Buffer.concat([startup, parameters]));
    await waitFor(() => raw.received().length > 1, { message: 'the answer to the startup' });
    expect(raw.received()[1], 'an Authentication or ErrorResponse message, framed').toMatch(/[RE]/);
  });

  it('dropRepliesAfter: every reply from the marked request on is discarded, connections open until cutAll', async () => {
    const redisUrl = inject('fleetcronRedisUrl');
    const proxy = await startProxy(redisUrl);
    const direct = new Redis(redisUrl);
    closers.push(() => direct.disconnect());
    const key = uniquePrefix('proxy-marker');
    const raw = await rawConnection(proxy.port);
    proxy.dropRepliesAfter('marked-value');
    raw.socket.write(`SET ${key}:a plain\r\n`);
    await waitFor(() => raw.received() === '+OK\r\n', { message: 'an unmarked reply passes' });
    raw.socket.write(`SET ${key}:b marked-value\r\nSET ${key}:c after\r\n`);
    await waitFor(async () => (await direct.get(`${key}:c`)) === 'after', {
      message: 'both commands applied',
    });
    expect(raw.closed(), 'the connection stays open').toBe(false);
    proxy.cutAll();
    await waitFor(raw.closed, { message: 'the connection cut' });
    expect(raw.received(), 'the marked reply and the next were lost').toBe('+OK\r\n');
    expect(proxy.dropped, 'not counted as dropNextReply').toBe(0);
    const next = await rawConnection(proxy.port);
    next.socket.write('PING\r\n');
    await waitFor(() => next.received() === '+PONG\r\n', { message: 'cutAll ended the drop' });
  });

  it('refuses an upstream URL it cannot use and an unknown protocol, naming the fix', async () => {
    await expect(ReplyDroppingProxy.start('not a url')).rejects.toMatchObject({
      code: 'INVALID_OPTION',
      option: 'upstreamUrl',
    });
    await expect(ReplyDroppingProxy.start('http://127.0.0.1')).rejects.toThrow(/add the port/);
    const bad = ReplyDroppingProxy.start('redis://127.0.0.1:1', {
      protocol: 'http2' as 'bytes',
    });
    await expect(bad).rejects.toBeInstanceOf(InvalidOptionError);
    await expect(bad).rejects.toThrow(/'bytes' \(default\) or 'postgres'/);
  });
});
