/**
 * fleetcron metrics on a Prometheus endpoint.
 *
 * Two schedulers (a fleet of two instances in one process, sharing a MemoryLock) run four jobs
 * (one of them always fails, so the exporter's alert rules have something to report);
 * `@fleetcron/exporter-otel` turns their lifecycle events into OpenTelemetry metrics, and
 * `@opentelemetry/exporter-prometheus` serves them on 127.0.0.1 for Prometheus to scrape.
 *
 *   pnpm --filter @fleetcron/examples prometheus            # serve on http://127.0.0.1:9464/metrics
 *   pnpm --filter @fleetcron/examples prometheus --port 9500
 *   pnpm --filter @fleetcron/examples prometheus --once     # scrape itself after a few fires, print, exit
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { every, MemoryLock, retry, Scheduler } from '@fleetcron/core';
import { fleetcronOpenTelemetry } from '@fleetcron/exporter-otel';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { MeterProvider } from '@opentelemetry/sdk-metrics';

const once = process.argv.includes('--once');
const portArg = process.argv.indexOf('--port');
// --once listens on a free port so a smoke test never collides with anything
const port = portArg >= 0 ? Number(process.argv[portArg + 1]) : once ? 0 : 9464;

// 1. OpenTelemetry metrics SDK with the Prometheus exporter as its reader. The exporter's own
//    server binds every interface, so we serve its handler from a server bound to 127.0.0.1.
//    (Outside this demo, `new PrometheusExporter({ host: '127.0.0.1', port })` does the same.)
const prometheus = new PrometheusExporter({ preventServerStart: true });
const meterProvider = new MeterProvider({ readers: [prometheus] });
const server = createServer((req, res) => {
  if (req.url?.split('?')[0] === '/metrics') prometheus.getMetricsRequestHandler(req, res);
  else res.writeHead(404).end('try /metrics\n');
});
await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`;
console.log(`fleetcron metrics at ${url}`);

// 2. The exporter: metrics from lifecycle events, spans from the middleware (no-op spans here:
//    this demo registers no tracer provider).
const otel = fleetcronOpenTelemetry({ meterProvider });

// 3. A fleet of two instances sharing one lock: every fire runs once, the other instance loses.
const lock = new MemoryLock();
const attemptsByFire = new Map<number, number>();
const fleet = ['web-1', 'web-2'].map((instanceId) => {
  const scheduler = new Scheduler({ lock, instanceId, middleware: [otel.middleware] });
  scheduler.add({ name: 'heartbeat', trigger: every(1000), run: () => {} });
  scheduler.add({
    name: 'flaky-import',
    trigger: every(2000),
    // its first attempt of every fire fails; retry() runs it again 100 ms later
    middleware: [retry({ attempts: 2, jitter: 'none', backoff: { initialMs: 100 } })],
    run: (ctx) => {
      const n = (attemptsByFire.get(ctx.fireAt.getTime()) ?? 0) + 1;
      attemptsByFire.set(ctx.fireAt.getTime(), n);
      if (n === 1) throw new Error('upstream not ready');
    },
  });
  scheduler.add({
    name: 'slow-report',
    trigger: every(1000),
    // runs 1.5 s: the fire in between finds the lease held and is skipped (overlap)
    run: (ctx) => ctx.clock.sleep(1500, ctx.signal),
  });
  scheduler.add({
    name: 'broken-export',
    trigger: every(3000),
    // fails every time: fires the FleetcronJobFailed alert of the exporter's rules
    run: () => {
      throw new Error('export target unreachable');
    },
  });
  scheduler.start();
  return scheduler;
});

async function shutdown(): Promise<void> {
  await Promise.all(fleet.map((s) => s.stop({ drainMs: 2000 })));
  otel.shutdown();
  await meterProvider.shutdown();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

if (once) {
  // wait (on the wall clock, with a deadline) until a few fires ran, then scrape ourselves once
  const deadline = Date.now() + 20_000;
  let text = '';
  for (;;) {
    text = await (await fetch(url)).text();
    const runs = text
      .split('\n')
      .filter((line) => line.startsWith('fleetcron_runs_total{'))
      .reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0);
    if (runs >= 6 && text.includes('fleetcron_skip_reason="overlap"')) break;
    if (Date.now() > deadline) {
      console.error('no fleetcron metrics after 20 s:\n', text);
      process.exitCode = 1;
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  console.log(
    text
      .split('\n')
      .filter((line) => line.startsWith('fleetcron_'))
      .join('\n'),
  );
  await shutdown();
} else {
  console.log('Ctrl-C to stop');
  process.once('SIGINT', () => {
    void shutdown();
  });
}
