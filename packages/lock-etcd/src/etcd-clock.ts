import http from 'node:http';
import https from 'node:https';
import { performance } from 'node:perf_hooks';
import { BackendUnavailableError, type Clock, realClock } from '@fleetcron/core';
import { ClockOffsetEstimator, type ClockSample } from '@fleetcron/core/backend';
import type { Etcd3, IOptions } from 'etcd3';
import type { ResolvedOptions } from './options.js';

/** Where and how {@link EtcdClock} reads the etcd host's `Date` header. */
export interface EtcdClockTarget {
  /** Base URL of an etcd client endpoint, `http://` or `https://` (`/version` is read). */
  url: string;
  /** TLS material for `https://` (the `Etcd3` client's `credentials`). */
  tls?: { ca?: Buffer; key?: Buffer; cert?: Buffer };
}

/** Tuning of {@link EtcdClock} (validated by the lock's options). */
export interface EtcdClockTuning {
  /** A new measurement this often, in ms. */
  remeasureMs: number;
  /** Measurements whose error bound exceeds this, in ms, are dropped. */
  maxErrorMs: number;
  /** Longest one measurement may take, in ms (it waits for one change of the server's second). */
  budgetMs: number;
}

/** One HTTP probe: when it left and came back (monotonic ms), and the server's `Date` in ms. */
interface Probe {
  sentMono: number;
  receivedMono: number;
  second: number;
}

/** Gap between probes while the next second change is not yet predicted, ms. */
const SEARCH_SPACING_MS = 8;
/** Gap between probes around a predicted second change, ms. */
const BURST_SPACING_MS = 1;
/** A failed measurement is retried after this long (or `remeasureMs`, if shorter), ms. */
const RETRY_MS = 5_000;
/** How long one probe may take, ms. */
const PROBE_TIMEOUT_MS = 1_000;

/**
 * The etcd host's clock, estimated from the `Date` header of its HTTP endpoint (`GET /version`),
 * which has whole-second resolution: the htpdate technique. Probes are sent one after another
 * until the header's second changes; the two probes that straddle the change bound the server's
 * `.000` instant between the first one's sending and the second one's answer, so one
 * measurement is good to half that span (about one round trip plus the probe spacing).
 * Measurements feed a {@link ClockOffsetEstimator} (NTP-style min-error filter, drift allowance,
 * reset when a measurement contradicts the estimate, e.g. after failover to another host).
 *
 * The first measurement starts on the first {@link ready} call; later ones run every
 * `remeasureMs` on unref'd timers, each burst timed around the predicted second change. Nothing
 * keeps the process alive; {@link close} stops it. Failures are kept in {@link lastError} and
 * retried after 5 s (or `remeasureMs`, if shorter); until a measurement exists {@link now} is `null`.
 */
export class EtcdClock {
  private readonly estimator = new ClockOffsetEstimator(realClock, { resolutionMs: 0 });
  private readonly agent: http.Agent;
  private first: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  private measuring = false;
  /** Why the last measurement failed, if it did. */
  lastError: Error | undefined;

  constructor(
    private readonly target: EtcdClockTarget,
    private readonly tuning: EtcdClockTuning,
  ) {
    const secure = target.url.startsWith('https:');
    this.agent = secure
      ? new https.Agent({ keepAlive: true, maxSockets: 1, ...target.tls })
      : new http.Agent({ keepAlive: true, maxSockets: 1 });
  }

  /**
   * Starts measuring on the first call and resolves once the first measurement succeeded or
   * failed (at most about `budgetMs` later); later calls resolve at once after that.
   */
  ready(): Promise<void> {
    this.first ??= this.measureAndSchedule();
    return this.first;
  }

  /** The etcd host's clock now, epoch ms, or `null` before a good measurement. */
  now(): number | null {
    return this.estimator.estimate() === null ? null : this.estimator.now();
  }

  /** The error bound of {@link now}, ms, or `null` before a good measurement. */
  boundMs(): number | null {
    return this.estimator.estimate()?.boundMs ?? null;
  }

  /** Stops re-measuring and closes the HTTP connection. */
  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.agent.destroy();
  }

  private async measureAndSchedule(): Promise<void> {
    if (this.closed || this.measuring) return;
    this.measuring = true;
    try {
      const sample = await this.measure();
      const rtt = sample.receivedMono - sample.sentMono;
      if (rtt / 2 > this.tuning.maxErrorMs) {
        throw measurementFailed(
          `the second change was bounded to ${Math.round(rtt)} ms only (maxErrorMs ${this.tuning.maxErrorMs}); the network to etcd is slow or the host is loaded`,
        );
      }
      this.estimator.record(sample);
      this.lastError = undefined;
    } catch (error) {
      this.lastError =
        error instanceof BackendUnavailableError
          ? error
          : new BackendUnavailableError('etcd', MEASUREMENT, error);
    } finally {
      this.measuring = false;
    }
    if (this.closed) return;
    // a failed measurement is retried sooner (the server may be restarting)
    const delay = this.lastError
      ? Math.min(this.tuning.remeasureMs, RETRY_MS)
      : this.tuning.remeasureMs;
    this.timer = setTimeout(() => void this.measureAndSchedule(), delay);
    this.timer.unref();
  }

  /** One measurement: probes until the server's second changes, within `budgetMs`. */
  private async measure(): Promise<ClockSample> {
    const deadline = performance.now() + this.tuning.budgetMs;
    let prev = await this.probe();
    while (performance.now() < deadline && !this.closed) {
      await sleep(this.gapBefore(prev));
      const cur = await this.probe();
      if (cur.second > prev.second) {
        return { sentMono: prev.sentMono, receivedMono: cur.receivedMono, backendTime: cur.second };
      }
      prev = cur;
    }
    throw measurementFailed(
      `the server's Date header did not change within ${this.tuning.budgetMs} ms`,
    );
  }

  /** The wait before the next probe: until shortly before the predicted second change, if known. */
  private gapBefore(prev: Probe): number {
    const estimate = this.estimator.estimate();
    if (estimate === null) return SEARCH_SPACING_MS;
    const etcdNow = this.estimator.now();
    const toChange = 1000 - (((etcdNow % 1000) + 1000) % 1000);
    const rtt = prev.receivedMono - prev.sentMono;
    const early = estimate.boundMs + rtt + 10;
    return toChange > early + BURST_SPACING_MS ? toChange - early : BURST_SPACING_MS;
  }

  private probe(): Promise<Probe> {
    const url = new URL('/version', this.target.url);
    const client = url.protocol === 'https:' ? https : http;
    return new Promise<Probe>((resolve, reject) => {
      const sentMono = performance.now();
      const req = client.get(url, { agent: this.agent, timeout: PROBE_TIMEOUT_MS }, (res) => {
        const receivedMono = performance.now();
        res.on('error', () => undefined); // the body is discarded; the Date header was read
        res.resume();
        const second = Date.parse(res.headers.date ?? '');
        if (Number.isFinite(second)) resolve({ sentMono, receivedMono, second });
        else reject(measurementFailed(`${url.href} answered without a Date header`));
      });
      req.on('timeout', () =>
        req.destroy(measurementFailed(`${url.href} did not answer within ${PROBE_TIMEOUT_MS} ms`)),
      );
      req.on('error', reject);
    });
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

/**
 * The adapter's `clock` and the etcd host's clock (`null` without a measurement) at a claim's
 * arrival: waits for the first measurement, and dates the etcd clock back to the arrival, so the
 * claim is judged as of when it arrived even when it waited.
 */
export async function clocksAtArrival(
  clock: Clock,
  etcdClock: EtcdClock | null,
): Promise<{ now: number; etcdNow: number | null }> {
  const arrivedAt = performance.now();
  const now = clock.now();
  await etcdClock?.ready();
  const measured = etcdClock?.now() ?? null;
  return { now, etcdNow: measured === null ? null : measured - (performance.now() - arrivedAt) };
}

/** Longest the first measurement may take (it waits for one change of the server's second), ms. */
export const ETCD_CLOCK_BUDGET_MS = 1_400;

/**
 * The {@link EtcdClock} of a lock on `client`: `etcdClock.url`, else the client's first host
 * (`http://` unless it names `https://`, or has no scheme and the client has TLS credentials),
 * with the client's TLS credentials. `null` when `etcdClock: false`.
 */
export function etcdClockOf(client: Etcd3, resolved: ResolvedOptions): EtcdClock | null {
  const option = resolved.etcdClock;
  if (option === false) return null;
  // `options` is protected in etcd3's typings; it holds the options the client was built with.
  const { options } = client as unknown as { options: IOptions };
  const hosts = typeof options.hosts === 'string' ? options.hosts.split(',') : options.hosts;
  const credentials = options.credentials;
  const host = (hosts[0] ?? '').trim();
  const url =
    option.url ??
    (/^https?:\/\//.test(host) ? host : `${credentials ? 'https' : 'http'}://${host}`);
  const tls = credentials && {
    ca: credentials.rootCertificate,
    key: credentials.privateKey,
    cert: credentials.certChain,
  };
  return new EtcdClock(
    { url, tls },
    {
      remeasureMs: option.remeasureMs,
      maxErrorMs: option.maxErrorMs,
      budgetMs: ETCD_CLOCK_BUDGET_MS,
    },
  );
}

/** The operation named in the clock's errors. */
const MEASUREMENT = 'clock measurement';

function measurementFailed(reason: string): BackendUnavailableError {
  return BackendUnavailableError.because('etcd', MEASUREMENT, reason);
}
