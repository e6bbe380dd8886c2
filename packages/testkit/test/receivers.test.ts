import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createTransport } from 'nodemailer';
import { afterEach, describe, expect, it } from 'vitest';
import { isAlive } from '../src/proc.js';
import { type HttpReceiver, startHttpReceiver } from '../src/receivers/http-receiver.js';
import { type SmtpReceiver, startSmtpReceiver } from '../src/receivers/smtp-receiver.js';
import { waitFor } from '../src/wait.js';
import { portOpen } from './helpers.js';

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

async function http(options?: Parameters<typeof startHttpReceiver>[0]): Promise<HttpReceiver> {
  const receiver = await startHttpReceiver(options);
  closers.push(() => receiver.close());
  return receiver;
}

async function smtp(): Promise<SmtpReceiver> {
  const receiver = await startSmtpReceiver();
  closers.push(() => receiver.close());
  return receiver;
}

const post = (url: string, body: string, signal?: AbortSignal) =>
  fetch(url, { method: 'POST', body, headers: { 'x-test': 'yes' }, signal });

describe('startHttpReceiver()', () => {
  it('records each request with its method, path, headers and body', async () => {
    const receiver = await http();
    const response = await post(`${receiver.url}/hook?a=1`, '{"n":1}');
    expect(response.status).toBe(200);
    expect(receiver.requests).toHaveLength(1);
    expect(receiver.requests[0]).toMatchObject({
      method: 'POST',
      path: '/hook?a=1',
      body: '{"n":1}',
      answer: 200,
    });
    expect(receiver.requests[0]?.headers['x-test']).toBe('yes');
  });

  it('fails the next n requests with the given status, then answers again', async () => {
    const receiver = await http();
    receiver.failNext(2, 502);
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await post(receiver.url, String(i))).status);
    expect(statuses).toEqual([502, 502, 200]);
  });

  it('hangs the next request until the client gives up', async () => {
    const receiver = await http();
    receiver.hangNext(1);
    const controller = new AbortController();
    const attempt = post(receiver.url, 'x', controller.signal);
    await receiver.waitForRequests(1);
    controller.abort();
    await expect(attempt).rejects.toThrow();
    expect(receiver.requests[0]?.answer).toBe('hung');
    expect((await post(receiver.url, 'y')).status).toBe(200);
  });

  it('answers what `respond` decides', async () => {
    const receiver = await http({
      respond: (r) =>
        r.headers['x-test'] === 'yes' ? { status: 401, body: 'no' } : { status: 204 },
    });
    expect((await post(receiver.url, '')).status).toBe(401);
  });

  it('closes even with a request hanging', async () => {
    const receiver = await http();
    receiver.hangNext(1);
    const attempt = post(receiver.url, 'x').catch((error: unknown) => error);
    await receiver.waitForRequests(1);
    await receiver.close();
    expect(await attempt).toBeInstanceOf(Error);
    expect(await portOpen(Number(new URL(receiver.url).port))).toBe(false);
  });
});

describe('startSmtpReceiver()', () => {
  const send = (receiver: SmtpReceiver, subject: string, extra: object = {}) =>
    createTransport({ host: receiver.host, port: receiver.port, secure: false, ...extra }).sendMail(
      {
        from: 'fleet@example.test',
        to: ['ops@example.test', 'oncall@example.test'],
        subject,
        text: 'body line — with a dash\nsecond line',
      },
    );

  it('accepts a message and records envelope, decoded subject and body', async () => {
    const receiver = await smtp();
    await send(receiver, 'Überweisung failed');
    const [mail] = await receiver.waitForMails(1);
    expect(mail).toMatchObject({
      from: 'fleet@example.test',
      to: ['ops@example.test', 'oncall@example.test'],
      subject: 'Überweisung failed',
    });
    expect(mail?.text.trim()).toBe('body line — with a dash\nsecond line');
  });

  it('refuses the next n messages with the given reply code', async () => {
    const receiver = await smtp();
    await receiver.failNext(1, 451);
    await expect(send(receiver, 'first')).rejects.toMatchObject({ responseCode: 451 });
    await send(receiver, 'second');
    expect(receiver.refused).toEqual([451]);
    expect(receiver.mails.map((m) => m.subject)).toEqual(['second']);
  });

  it('hangs the next message until the client times out', async () => {
    const receiver = await smtp();
    await receiver.hangNext(1);
    await expect(send(receiver, 'hung', { socketTimeout: 300 })).rejects.toThrow();
    expect(receiver.mails).toEqual([]);
  });

  it('dies with the process that started it (SIGKILL)', async () => {
    const fixture = fileURLToPath(new URL('./fixtures/start-smtp.ts', import.meta.url));
    const parent = spawn(process.execPath, ['--import', 'tsx', fixture], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let stdout = '';
    parent.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    const line = await waitFor(() => stdout.includes('\n') && stdout.split('\n')[0], {
      timeoutMs: 30_000,
      message: 'the fixture to print the receiver',
    });
    const { pid, port } = JSON.parse(line) as { pid: number; port: number };
    expect(isAlive(pid)).toBe(true);
    expect(await portOpen(port)).toBe(true);
    parent.kill('SIGKILL');
    await waitFor(() => !isAlive(pid), { timeoutMs: 10_000, message: `smtp child ${pid} gone` });
    expect(await portOpen(port)).toBe(false);
  });
});
