/**
 * Bench: client CPU per batched claim, the hand codec (src/txn-encode.ts, src/txn-decode.ts)
 * against code generated from etcd's rpc.proto: protobuf-es (bench/generated/, `gen:proto`) and
 * protobufjs (bench/protobufjs-codec.ts). Per batched claim: build and encode the `TxnRequest`
 * of one full `Txn` of `claimMany` (124 exclusive claims, as `BatchClaimer` sends it), and
 * decode etcd's real `TxnResponse` to it (captured from a real etcd first: all won, and all
 * lost to another owner). Runs are interleaved (hand, protobuf-es, protobufjs, then the reverse
 * order, …) after a warm-up; each figure is CPU time (`process.cpuUsage`, user + system, so the
 * GC's helper threads count) over `--iterations` batched claims.
 *
 * Run: `pnpm --filter @fleetcron/lock-etcd bench:codec [--rounds 7] [--iterations 200]`
 * (`taskset -c 0` in front pins it to one core). Uses `FLEETCRON_TEST_ETCD_ENDPOINTS` when set,
 * else starts a throwaway etcd through the testkit. A measuring tool, not a test:
 * test/generated-codec.test.ts checks that the codecs agree.
 */
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { startEtcd } from '@fleetcron/testkit';
import { Etcd3 } from 'etcd3';
import {
  type BatchedClaim,
  batchedClaim,
  decodeByHand,
  decodeGenerated,
  decodeWithProtobufjs,
  decodeWithProtobufjsDropIn,
  encodeByHand,
  encodeGenerated,
  encodeWithProtobufjs,
  encodeWithProtobufjsDropIn,
  sendForBytes,
} from './batched-claim.js';
import { sameTxnRequest } from './protobufjs-codec.js';

/** One codec as the bench drives it. */
interface Codec {
  name: string;
  encode(batch: BatchedClaim): Uint8Array;
  decode(bytes: Buffer): unknown;
}

const CODECS: Codec[] = [
  { name: 'hand', encode: encodeByHand, decode: decodeByHand },
  { name: 'protobuf-es', encode: encodeGenerated, decode: decodeGenerated },
  { name: 'protobufjs', encode: encodeWithProtobufjs, decode: decodeWithProtobufjs },
  {
    name: 'protobufjs drop-in',
    encode: encodeWithProtobufjsDropIn,
    decode: decodeWithProtobufjsDropIn,
  },
];

const PARTS = ['encode', 'decode won', 'decode lost'] as const;
const ROWS = [...PARTS, 'total won', 'total lost'] as const;
type Row = (typeof ROWS)[number];

/** Keeps results alive so that no work is optimised away. */
let sink = 0;

/** CPU µs per call of `fn`, over `iterations` calls. */
function cpuPerCall(iterations: number, fn: () => unknown): number {
  const start = process.cpuUsage();
  for (let i = 0; i < iterations; i++) {
    const out = fn() as { length?: number; succeeded?: boolean };
    sink += out.length ?? (out.succeeded ? 1 : 0);
  }
  const used = process.cpuUsage(start);
  return (used.user + used.system) / iterations;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const upper = sorted[mid] as number;
  return sorted.length % 2 ? upper : ((sorted[mid - 1] as number) + upper) / 2;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      rounds: { type: 'string', default: '7' },
      iterations: { type: 'string', default: '200' },
    },
  });
  const rounds = Number(values.rounds);
  const iterations = Number(values.iterations);
  const etcd = await startEtcd();
  const client = new Etcd3({ hosts: [...etcd.endpoints] });
  try {
    // Lease ids as the adapter picks them (random safe integers), granted for real.
    const id = () => String(1 + Math.floor(Math.random() * (Number.MAX_SAFE_INTEGER - 1)));
    const recordLease = id();
    const jobLease = id();
    for (const ID of [recordLease, jobLease]) await client.leaseClient.leaseGrant({ TTL: 60, ID });
    const prefix = `bench-codec/${Date.now()}/`;
    const settings = { prefix, fireAt: Date.now(), recordLease, jobLease };
    const won = batchedClaim({ ...settings, owner: 'instance-a' });
    const lost = batchedClaim({ ...settings, owner: 'instance-b' });
    const request = encodeByHand(won);
    for (const codec of CODECS) {
      // the same bytes, or (the drop-in writes some defaults the others leave out) the same
      // request field for field
      const bytes = codec.encode(won);
      if (!Buffer.from(bytes).equals(request) && !sameTxnRequest(bytes, request)) {
        throw new Error(`${codec.name} encodes the batched claim differently from the hand codec`);
      }
    }
    const wonBytes = await sendForBytes(client, request);
    const lostBytes = await sendForBytes(client, encodeByHand(lost));
    const work: Record<(typeof PARTS)[number], (codec: Codec) => () => unknown> = {
      encode: (codec) => () => codec.encode(won),
      'decode won': (codec) => () => codec.decode(wonBytes),
      'decode lost': (codec) => () => codec.decode(lostBytes),
    };
    const figures = new Map<string, Record<Row, number[]>>(
      CODECS.map((codec) => [
        codec.name,
        Object.fromEntries(ROWS.map((row) => [row, [] as number[]])) as Record<Row, number[]>,
      ]),
    );
    // Warm-up: every part of every codec, twice, untimed.
    for (let w = 0; w < 2; w++) {
      for (const codec of CODECS)
        for (const part of PARTS) cpuPerCall(iterations, work[part](codec));
    }
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? CODECS : [...CODECS].reverse();
      for (const codec of order) {
        const f = figures.get(codec.name) as Record<Row, number[]>;
        const [encode, decodeWon, decodeLost] = PARTS.map((part) =>
          cpuPerCall(iterations, work[part](codec)),
        ) as [number, number, number];
        f.encode.push(encode);
        f['decode won'].push(decodeWon);
        f['decode lost'].push(decodeLost);
        f['total won'].push(encode + decodeWon);
        f['total lost'].push(encode + decodeLost);
      }
    }
    const load = loadavg()
      .map((l) => l.toFixed(1))
      .join(' ');
    const cell = (xs: number[]) =>
      `${median(xs).toFixed(0)} (${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)})`;
    console.log(`# codec bench ${new Date().toISOString()}, node ${process.version}, load ${load}`);
    console.log(
      `# µs of client CPU per batched claim: 124 exclusive claims in one Txn (request ${request.length} B; answer ${wonBytes.length} B all won, ${lostBytes.length} B all lost)`,
    );
    console.log(`# ${rounds} interleaved rounds of ${iterations} each: median (min–max); × hand`);
    const others = CODECS.slice(1);
    console.log(`| part | hand | ${others.map((c) => c.name).join(' | ')} |`);
    console.log(`| --- | --- | ${others.map(() => '---').join(' | ')} |`);
    const hand = figures.get('hand') as Record<Row, number[]>;
    for (const row of ROWS) {
      const h = hand[row];
      const cells = others.map((codec) => {
        const g = (figures.get(codec.name) as Record<Row, number[]>)[row];
        const overlap = Math.min(...g) <= Math.max(...h) && Math.min(...h) <= Math.max(...g);
        const ratio = (median(g) / median(h)).toFixed(2);
        return `${cell(g)}, ${ratio}×${overlap ? ' (spreads overlap)' : ''}`;
      });
      console.log(`| ${row} | ${cell(h)} | ${cells.join(' | ')} |`);
    }
    if (sink === 0) console.log('(nothing was decoded)');
  } finally {
    client.close();
    await etcd.close();
  }
}

void main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
