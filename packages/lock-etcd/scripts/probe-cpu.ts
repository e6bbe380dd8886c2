/**
 * Probe: client CPU of `claimMany` in one process, warm JIT: 8 bursts of 1,000 requests (batches
 * of 256, all in flight) that all win, then 8 that all lose (a second lock claims the same
 * fires). Prints CPU ms and wall ms per 1,000 requests. Needs an etcd at `ETCD`
 * (default http://127.0.0.1:2379). Run from packages/lock-etcd:
 * `ETCD=http://127.0.0.1:PORT npx tsx --conditions=source scripts/probe-cpu.ts`. A measuring
 * tool, not a test.
 */
import { Etcd3 } from 'etcd3';
import { EtcdLock } from '../src/index.js';

async function main() {
  const mk = () =>
    new EtcdLock(new Etcd3({ hosts: [process.env.ETCD ?? 'http://127.0.0.1:2379'] }), {
      prefix: `prof-${process.pid}/`,
    });
  const lock = mk();
  const lock2 = mk();
  const keep = setInterval(() => {}, 1000);
  const t = Date.now();
  async function burst(l: EtcdLock, tag: string, owner: string) {
    const reqs = Array.from({ length: 1000 }, (_, j) => ({
      key: `scale-1700000000-12-${tag}-${j}`,
      fireAt: t,
      owner,
      leaseMs: 30000,
      exclusive: true,
    }));
    const bs = [];
    for (let s = 0; s < 1000; s += 256) bs.push(l.claimMany(reqs.slice(s, s + 256)));
    await Promise.all(bs);
  }
  for (let i = 0; i < 6; i++) await burst(lock, `w${i}`, 'a');
  for (let i = 0; i < 6; i++) await burst(lock2, `w${i}`, 'b');
  const out: string[] = [];
  for (const [name, l, owner] of [
    ['won', lock, 'a'],
    ['lost', lock2, 'b'],
  ] as const) {
    const c0 = process.cpuUsage();
    const t0 = Date.now();
    for (let i = 0; i < 8; i++) await burst(l, `m${i}`, owner);
    const c = process.cpuUsage(c0);
    out.push(
      `${name} cpu ms/1000 ${Math.round((c.user + c.system) / 8000)} wall ${(Date.now() - t0) / 8}`,
    );
  }
  console.error(out.join('; '));
  await lock.close();
  await lock2.close();
  clearInterval(keep);
  process.exit(0);
}
void main();
