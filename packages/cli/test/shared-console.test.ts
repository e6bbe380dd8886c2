import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cron, type InstanceRecord } from '@fleetcron/core';
import { SqliteStore } from '@fleetcron/store-sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { terminalSafe } from '../src/terminal-text.js';
import { BUILT_BIN, runFleetcron } from './built-bin.js';
import { registered } from './seed.js';

// Issue 30, item 7: what the CLI prints and how `fleetcron serve` behaves, shared with other teams.

const SPOOFED = 'invoice-\u202Eexe.fdp';
const TITLE = '\u001b]0;pwned\u0007';
/** `true` when `text` holds a control (but newline or tab) or bidi character, raw. */
const hasRawControl = (text: string): boolean =>
  /[\p{Cc}\u202A-\u202E\u2066-\u2069]/u.test(text.replace(/[\n\t]/g, ''));

const dir = mkdtempSync(join(tmpdir(), 'fleetcron-cli-shared-'));
const file = join(dir, 'fleet.db');
let store: SqliteStore;

function instance(instanceId: string, jobs: InstanceRecord['jobs']): InstanceRecord {
  return {
    instanceId,
    host: 'seed-host',
    pid: 7,
    version: '0.1.0',
    startedAt: Date.now(),
    heartbeatMs: 600_000,
    clock: null,
    jobs,
  };
}

beforeAll(async () => {
  store = new SqliteStore(file);
  await store.open();
  const at3 = registered('billing', cron('0 3 * * *', { tz: 'Europe/Berlin' }));
  const at4 = registered('billing', cron('0 4 * * *', { tz: 'Europe/Berlin' }));
  // written straight to the store, as an instance from before core refused such names would
  const spoofed = registered(SPOOFED, cron('0 5 * * *'));
  await store.heartbeat(instance('i-1', [at3, spoofed]));
  await store.heartbeat(instance('i-2', [at4]));
  await store.heartbeat(instance('i-3', [at3]));
  await store.record({
    id: randomUUID(),
    job: 'billing',
    fireAt: Date.now() - 60_000,
    status: 'failed',
    attempt: 1,
    instanceId: 'i-1',
    token: 1,
    startedAt: Date.now() - 60_000,
    finishedAt: Date.now() - 59_000,
    error: `Error: upstream said ${TITLE}\u009b2J and \u202Egnp.exe`,
  });
  await store.setPaused(SPOOFED, true, { by: `mallory\u001b[2J${TITLE}` });
});

afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('terminalSafe', () => {
  it('prints controls, escape sequences and bidi controls as visible escapes, keeps newlines', () => {
    expect(terminalSafe(`a${TITLE}b\u009b31m\u202Ec\r\n\td`)).toBe(
      'a\\u001b]0;pwned\\u0007b\\u009b31m\\u202ec\\u000d\n\td',
    );
    const json = JSON.stringify({ name: SPOOFED, e: '\u009b' });
    expect(JSON.parse(terminalSafe(json))).toEqual({ name: SPOOFED, e: '\u009b' });
  });
});

describe('what the CLI prints from the store', () => {
  const env = () => ({ FLEETCRON_URL: `sqlite://${file}` });

  it('jobs and history: no raw control or bidi character reaches the terminal', async () => {
    const jobs = await runFleetcron(['jobs'], env());
    expect(jobs.code, jobs.stderr).toBe(0);
    const history = await runFleetcron(['history', 'billing'], env());
    expect(history.code, history.stderr).toBe(0);
    for (const text of [jobs.stdout, jobs.stderr, history.stdout]) {
      expect(hasRawControl(text)).toBe(false);
    }
    expect(jobs.stdout).toContain('invoice-\\u202eexe.fdp');
    expect(jobs.stdout).toContain('paused by mallory\\u001b[2J\\u001b]0;pwned\\u0007');
    expect(history.stdout).toContain('upstream said \\u001b]0;pwned\\u0007\\u009b2J');
    const json = await runFleetcron(['jobs', '--json'], env());
    expect(hasRawControl(json.stdout)).toBe(false);
    const names = (JSON.parse(json.stdout) as Array<{ name: string }>).map((j) => j.name);
    expect(names).toContain(SPOOFED); // JSON keeps the value, only escaped
  });

  it('drift: says which instances define what', async () => {
    const jobs = await runFleetcron(['jobs'], env());
    expect(jobs.stderr).toContain('warning: drift in billing');
    expect(jobs.stderr).toMatch(
      /\n {4}cron\(0 3 \* \* \* Europe\/Berlin\) \(definition [0-9a-f]{12}\) on 2: i-1, i-3\n/,
    );
    expect(jobs.stderr).toMatch(
      /\n {4}cron\(0 4 \* \* \* Europe\/Berlin\) \(definition [0-9a-f]{12}\) on 1: i-2\n/,
    );
  });

  it('refuses an over-long or control-carrying --by, naming the field', async () => {
    for (const by of ['x'.repeat(201), `ops${TITLE}`]) {
      const run = await runFleetcron(['pause', 'billing', '--by', by], env());
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(/^fleetcron: by: must/);
      expect(hasRawControl(run.stderr)).toBe(false);
    }
  });
});

describe('fleetcron serve arguments', () => {
  it('a bad --grace or tokens file line is exit 2 naming it; duplicate names are refused', async () => {
    const env = { FLEETCRON_TOKEN: `t-${randomUUID()}` };
    const grace = await runFleetcron(['serve', '--sqlite', file, '--grace', 'soon'], env);
    expect(grace.code).toBe(2);
    expect(grace.stderr).toContain('--grace must be an integer from 0 to 600000 ms');
    const bad = join(dir, 'bad-tokens');
    writeFileSync(bad, `alice admin ${randomUUID()}\n`);
    const line = await runFleetcron(['serve', '--sqlite', file, '--tokens-file', bad]);
    expect(line.code).toBe(2);
    expect(line.stderr).toContain('--tokens-file line 1: expected "<name> <read|write> <token>"');
    const twice = join(dir, 'twice-tokens');
    writeFileSync(twice, `ops write ${randomUUID()}\nops read ${randomUUID()}\n`);
    const dup = await runFleetcron(['serve', '--sqlite', file, '--tokens-file', twice]);
    expect(dup.code).toBe(1);
    expect(dup.stderr).toContain('tokens[1].name: "ops" names two tokens');
  });
});

describe('fleetcron serve', () => {
  let child: ChildProcess;
  let exited: Promise<number | null>;
  let port: number;
  let out = '';
  const tokens = { alice: `alice-${randomUUID()}`, bob: `bob-${randomUUID()}` };

  beforeAll(async () => {
    const tokensFile = join(dir, 'tokens');
    writeFileSync(
      tokensFile,
      `# name role token\nalice write ${tokens.alice}\n\nbob   write ${tokens.bob}\n`,
    );
    child = spawn(
      process.execPath,
      [
        BUILT_BIN,
        'serve',
        '--port',
        '0',
        '--sqlite',
        file,
        '--tokens-file',
        tokensFile,
        '--allowed-hosts',
        'ops.test',
        '--grace',
        '300',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    exited = new Promise((resolve) => child.on('exit', resolve));
    child.stdout?.setEncoding('utf8').on('data', (d: string) => {
      out += d;
    });
    port = await new Promise<number>((resolve, reject) => {
      const check = () => {
        const match = /on http:\/\/127\.0\.0\.1:(\d+)\//.exec(out);
        if (match) resolve(Number(match[1]));
        else setTimeout(check, 50);
      };
      check();
      void exited.then((code) => reject(new Error(`serve exited ${code}`)));
    });
  });

  afterAll(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });

  /** A request with the given Host header; resolves status and body. */
  function call(
    path: string,
    options: { host?: string; token?: string; method?: string; body?: string } = {},
  ): Promise<{ status: number; body: string }> {
    return new Promise((resolve, reject) => {
      const headers: Record<string, string> = { host: options.host ?? `127.0.0.1:${port}` };
      if (options.token) headers.authorization = `Bearer ${options.token}`;
      if (options.body !== undefined) {
        headers['content-type'] = 'application/json';
        headers['x-fleetcron-request'] = 'test';
      }
      const req = request(
        { host: '127.0.0.1', port, path, method: options.method ?? 'GET', headers },
        (res) => {
          let body = '';
          res.setEncoding('utf8').on('data', (d: string) => {
            body += d;
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        },
      );
      req.on('error', reject);
      req.end(options.body);
    });
  }

  it('answers only its own and the allowed host names', async () => {
    const rebound = await call('/api/me', { host: `attacker.test:${port}`, token: tokens.alice });
    expect(rebound.status).toBe(400);
    expect(JSON.parse(rebound.body)).toMatchObject({ error: { code: 'HOST_NOT_ALLOWED' } });
    expect((await call('/api/me', { token: tokens.alice })).status).toBe(200);
    expect((await call('/api/me', { host: `localhost:${port}`, token: tokens.alice })).status).toBe(
      200,
    );
    expect((await call('/api/me', { host: `ops.test:${port}`, token: tokens.alice })).status).toBe(
      200,
    );
  });

  it('prints each action with the token holder name and a terminal-safe note', async () => {
    // a note with a terminal control sequence is refused (core's checkAuditNote), nothing paused
    const refused = await call('/api/jobs/billing/pause', {
      token: tokens.alice,
      method: 'POST',
      body: JSON.stringify({ note: `INC-7 ${TITLE}` }),
    });
    expect(refused.status, refused.body).toBe(400);
    expect(JSON.parse(refused.body)).toMatchObject({
      error: { code: 'INVALID_OPTION', field: 'note' },
    });
    // a bidi override is stored as given, and printed as its visible escape
    const pause = await call('/api/jobs/billing/pause', {
      token: tokens.alice,
      method: 'POST',
      body: JSON.stringify({ note: 'INC-7 \u202Eexe.fdp' }),
    });
    expect(pause.status, pause.body).toBe(200);
    const resume = await call('/api/jobs/billing/resume', {
      token: tokens.bob,
      method: 'POST',
      body: '{}',
    });
    expect(resume.status, resume.body).toBe(200);
    const deadline = Date.now() + 5000;
    while (!out.includes('admin:bob resume') && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(out).toMatch(/Z admin:alice pause "billing" note "INC-7 \\u202eexe\.fdp"\n/);
    expect(out).toMatch(/Z admin:bob resume "billing"\n/);
    expect(out.match(/admin:alice pause/g)).toHaveLength(1);
    expect(hasRawControl(out)).toBe(false);
  });

  it('ends within its grace on SIGTERM while a client holds a request open', async () => {
    const held = connect(port, '127.0.0.1');
    const heldClosed = new Promise<void>((resolve) => held.on('close', () => resolve()));
    held.on('error', () => {});
    await new Promise<void>((resolve) => held.on('connect', () => resolve()));
    // headers with Expect: 100-continue; node:http answers "100 Continue" once it has parsed
    // them and handed the request on: then the first byte of a 100-byte body, and nothing more
    const continued = new Promise<void>((resolve) =>
      held.on('data', (data: Buffer) => {
        if (data.toString().includes('100 Continue')) resolve();
      }),
    );
    held.write(
      `POST /api/jobs/billing/pause HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${tokens.alice}\r\nContent-Type: application/json\r\nX-Fleetcron-Request: t\r\nExpect: 100-continue\r\nContent-Length: 100\r\n\r\n`,
    );
    await continued;
    held.write('{');
    child.kill('SIGTERM');
    const code = await Promise.race([
      exited,
      new Promise<string>((resolve) =>
        setTimeout(() => resolve('still running after 10 s'), 10_000),
      ),
    ]);
    expect(code).toBe(0);
    await heldClosed;
  });
});
