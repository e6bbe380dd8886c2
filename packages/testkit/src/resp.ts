import { connect } from 'node:net';

/** A decoded RESP reply. Errors are returned (not thrown) as `Error` values. */
export type RespValue = string | number | null | Error | RespValue[];

/** Encodes one command as a RESP array of bulk strings. */
function encode(args: string[]): string {
  return `*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`;
}

/** Parses one reply at `offset`; undefined when the buffer does not hold a whole reply yet. */
function parse(buf: Buffer, offset: number): { value: RespValue; next: number } | undefined {
  const eol = buf.indexOf('\r\n', offset);
  if (eol < 0) return undefined;
  const type = String.fromCharCode(buf[offset] ?? 0);
  const line = buf.toString('utf8', offset + 1, eol);
  switch (type) {
    case '+':
      return { value: line, next: eol + 2 };
    case '-':
      return { value: new Error(line), next: eol + 2 };
    case ':':
      return { value: Number(line), next: eol + 2 };
    case '$': {
      const len = Number(line);
      if (len < 0) return { value: null, next: eol + 2 };
      if (buf.length < eol + 2 + len + 2) return undefined;
      return { value: buf.toString('utf8', eol + 2, eol + 2 + len), next: eol + 2 + len + 2 };
    }
    case '*': {
      const count = Number(line);
      if (count < 0) return { value: null, next: eol + 2 };
      const items: RespValue[] = [];
      let next = eol + 2;
      for (let i = 0; i < count; i++) {
        const item = parse(buf, next);
        if (!item) return undefined;
        items.push(item.value);
        next = item.next;
      }
      return { value: items, next };
    }
    default:
      throw new Error(`unexpected RESP reply type ${JSON.stringify(type)}`);
  }
}

/** Where and how to reach a Redis server. */
export interface RespTarget {
  host: string;
  port: number;
  username?: string;
  password?: string;
}

/** Parses `redis://[user:pass@]host:port` into a {@link RespTarget}. */
export function respTarget(url: string): RespTarget {
  const u = new URL(url);
  return {
    host: u.hostname,
    port: Number(u.port || 6379),
    ...(u.username ? { username: decodeURIComponent(u.username) } : {}),
    ...(u.password ? { password: decodeURIComponent(u.password) } : {}),
  };
}

/**
 * Sends `commands` on one new connection (after AUTH when the target has a password) and returns
 * their replies. A tiny RESP client so the testkit does not need a Redis client library.
 */
export function redisCommands(
  target: RespTarget,
  commands: string[][],
  timeoutMs = 5000,
): Promise<RespValue[]> {
  const all = target.password
    ? [
        target.username ? ['AUTH', target.username, target.password] : ['AUTH', target.password],
        ...commands,
      ]
    : commands;
  return new Promise((resolve, reject) => {
    const socket = connect({ host: target.host, port: target.port });
    let buf = Buffer.alloc(0);
    const replies: RespValue[] = [];
    const done = (error: Error | undefined): void => {
      socket.destroy();
      clearTimeout(timer);
      if (error) reject(error);
      else resolve(target.password ? replies.slice(1) : replies);
    };
    const timer = setTimeout(
      () => done(new Error(`redis ${target.host}:${target.port}: no reply within ${timeoutMs} ms`)),
      timeoutMs,
    );
    socket.on('error', (error) => done(error));
    socket.on('connect', () => socket.write(all.map(encode).join('')));
    socket.on('data', (chunk) => {
      buf = Buffer.concat([buf, chunk]);
      let offset = 0;
      try {
        for (;;) {
          const reply = parse(buf, offset);
          if (!reply) break;
          replies.push(reply.value);
          offset = reply.next;
        }
      } catch (error) {
        done(error as Error);
        return;
      }
      buf = buf.subarray(offset);
      if (replies.length >= all.length) done(undefined);
    });
    socket.on('close', () => {
      if (replies.length < all.length) done(new Error('redis closed the connection'));
    });
  });
}

/** True when the server answers PING with PONG. */
export async function redisPing(target: RespTarget, timeoutMs = 1000): Promise<boolean> {
  try {
    const [reply] = await redisCommands(target, [['PING']], timeoutMs);
    return reply === 'PONG';
  } catch {
    return false;
  }
}
