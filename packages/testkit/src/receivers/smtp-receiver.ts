import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { setprivPath } from '../binaries.js';
import { ServerNotInstalledError, ServerStartError } from '../errors.js';
import { waitFor } from '../wait.js';

/** One message an {@link SmtpReceiver} accepted. */
export interface ReceivedMail {
  /** Envelope sender (`MAIL FROM`). */
  from: string;
  /** Envelope recipients (`RCPT TO`). */
  to: string[];
  /** Decoded `Subject` header. */
  subject: string;
  /** Decoded plain-text body. */
  text: string;
  /** Decoded HTML body, `''` when there is none. */
  html: string;
  /** Headers (lower-case names), structured values as JSON text. */
  headers: Record<string, string>;
  /** When it was accepted, epoch ms. */
  receivedAt: number;
}

/**
 * A real SMTP server (the `smtp-server` package, in a child process that dies with the test
 * process) on a free loopback port, recording every accepted message.
 */
export interface SmtpReceiver {
  /** `127.0.0.1`. */
  readonly host: string;
  /** The port it listens on (plain SMTP, no TLS, any or no authentication accepted). */
  readonly port: number;
  /** Messages accepted so far, in order. */
  readonly mails: readonly ReceivedMail[];
  /** Messages refused so far by {@link SmtpReceiver.failNext} (their reply codes). */
  readonly refused: readonly number[];
  /** Refuses the next `n` messages after their data with reply `code` (default 451, temporary). */
  failNext(n: number, code?: number): Promise<void>;
  /** Never answers the data of the next `n` messages (the client's timeout must end them). */
  hangNext(n: number): Promise<void>;
  /** Resolves once at least `n` messages were accepted; rejects after `timeoutMs` (default 10 000). */
  waitForMails(n: number, timeoutMs?: number): Promise<readonly ReceivedMail[]>;
  /** The child's pid (for fault tests). */
  readonly pid: number;
  /** Stops the server process and waits for it to exit. */
  close(): Promise<void>;
}

/** The child script, beside `src/` in the workspace and beside `dist/` when published. */
function childScript(): string {
  for (const relative of ['../../receivers/smtp-child.mjs', '../receivers/smtp-child.mjs']) {
    const file = fileURLToPath(new URL(relative, import.meta.url));
    if (existsSync(file)) return file;
  }
  throw new ServerStartError(
    'smtp receiver: receivers/smtp-child.mjs is missing from @fleetcron/testkit',
    '',
  );
}

/** Throws {@link ServerNotInstalledError} unless the child's packages resolve from the script. */
function assertInstalled(script: string): void {
  const require = createRequire(script);
  for (const name of ['smtp-server', 'mailparser']) {
    try {
      require.resolve(name);
    } catch {
      throw new ServerNotInstalledError(
        `smtp receiver needs the npm package ${name} beside @fleetcron/testkit: pnpm add -D smtp-server mailparser`,
      );
    }
  }
}

/** Starts an {@link SmtpReceiver}; ready within a few hundred ms. */
export async function startSmtpReceiver(
  options: { startTimeoutMs?: number } = {},
): Promise<SmtpReceiver> {
  const script = childScript();
  assertInstalled(script);
  const [file, args] = setprivPath
    ? [setprivPath, ['--pdeathsig', 'SIGKILL', '--', process.execPath, script]]
    : [process.execPath, [script]];
  const child: ChildProcessWithoutNullStreams = spawn(file, args, { stdio: 'pipe' });
  const mails: ReceivedMail[] = [];
  const refused: number[] = [];
  const acks = new Set<number>();
  const output: string[] = [];
  let port = 0;
  let exited: string | undefined;
  const gone = new Promise<void>((resolve) => {
    child.once('exit', (code, sig) => {
      exited = sig ? `signal ${sig}` : `exit code ${code}`;
      resolve();
    });
    child.once('error', (error) => {
      exited = error.message;
      resolve();
    });
  });
  child.stdin.on('error', () => {}); // writing to a child that died: seen through `exited`
  child.stderr.on('data', (chunk: Buffer) => output.push(chunk.toString('utf8')));
  createInterface({ input: child.stdout }).on('line', (line) => {
    let message: Record<string, unknown>;
    try {
      message = JSON.parse(line);
    } catch {
      output.push(line);
      return;
    }
    if (typeof message.ready === 'number') port = message.ready;
    else if (message.mail) mails.push(message.mail as ReceivedMail);
    else if (message.refused) refused.push((message.refused as { code: number }).code);
    else if (typeof message.ack === 'number') acks.add(message.ack);
    else output.push(line);
  });
  try {
    await waitFor(() => port > 0 || exited !== undefined, {
      timeoutMs: options.startTimeoutMs ?? 10_000,
      intervalMs: 10,
      message: 'the SMTP receiver to listen',
    });
  } catch (cause) {
    child.kill('SIGKILL');
    throw new ServerStartError('smtp receiver did not start in time', output.join(''), { cause });
  }
  if (exited !== undefined) {
    throw new ServerStartError(
      `smtp receiver exited (${exited}) before it was ready`,
      output.join(''),
    );
  }

  let nextId = 1;
  const command = async (body: Record<string, unknown>): Promise<void> => {
    const id = nextId++;
    child.stdin.write(`${JSON.stringify({ ...body, id })}\n`);
    await waitFor(() => acks.has(id) || exited !== undefined, { timeoutMs: 5000, intervalMs: 5 });
    if (exited !== undefined)
      throw new ServerStartError(`smtp receiver exited (${exited})`, output.join(''));
  };

  return {
    host: '127.0.0.1',
    port,
    mails,
    refused,
    pid: child.pid ?? 0,
    failNext: (n, code = 451) => command({ failNext: n, code }),
    hangNext: (n) => command({ hangNext: n }),
    waitForMails(n, timeoutMs = 10_000) {
      return waitFor(() => mails.length >= n && mails, {
        timeoutMs,
        intervalMs: 10,
        message: () => `${n} mails at the SMTP receiver (got ${mails.length})`,
      });
    },
    async close() {
      if (exited === undefined) {
        child.stdin.end();
        const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
        await gone;
        clearTimeout(timer);
      }
    },
  };
}
