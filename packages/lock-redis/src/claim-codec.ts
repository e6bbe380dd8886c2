import {
  type ClaimedFire,
  type ClaimRequest,
  type ClaimResult,
  InvalidOptionError,
  type Lease,
  type LostReason,
} from '@fleetcron/core';
import { assertClaimRequest, assertPositiveMs } from '@fleetcron/core/backend';
import type { BatchCall } from './batch-calls.js';
import type { LockKeys } from './keys.js';

/**
 * Checks one claim request before it is sent (fireAt an integer, catch-up part, lease length)
 * and answers its lease length in whole ms. Throws `InvalidOptionError` naming the field.
 */
export function checkClaim(request: ClaimRequest): number {
  assertFireAt(request.fireAt);
  assertClaimRequest(request);
  const leaseMs = Math.ceil(request.leaseMs);
  assertPositiveMs('leaseMs', leaseMs);
  return leaseMs;
}

/**
 * Packs the claim script's KEYS and its one `requests` argument (see scripts.ts, `CLAIM`) for
 * the requests of one script call: 3 keys per request, and one string for all of them, so the
 * client converts and writes 3 arguments per request instead of 7.
 */
export class ClaimPacker implements BatchCall {
  readonly positions: number[] = [];
  readonly keys: string[] = [];
  private packed = '';
  private owner: string | undefined;
  private fireAt = Number.NaN;
  private fireAtText = '';

  /** Adds one request: its keys, and its `fireAt|lease|since|owner` part of the packed argument. */
  add(lockKeys: LockKeys, request: ClaimRequest, leaseMs: number): void {
    const { fireAt, owner } = request;
    // the requests of a batch mostly share their fire time: convert it once
    if (fireAt !== this.fireAt) {
      this.fireAt = fireAt;
      this.fireAtText = String(fireAt);
    }
    this.keys.push(lockKeys.fire + this.fireAtText, lockKeys.fires, lockKeys.job);
    const since = request.catchUp ? String(request.catchUp.since) : '';
    const lease = request.exclusive ? `x${leaseMs}` : leaseMs;
    // an owner equal to the previous request's is sent once ('' bytes: the one before)
    const ownerPart = owner === this.owner ? ':' : `${Buffer.byteLength(owner)}:${owner}`;
    this.owner = owner;
    this.packed += `${this.fireAtText}|${lease}|${since}|${ownerPart}`;
  }

  /** @param head The script's first two ARGV: windowMs and earlyToleranceMs. */
  constructor(private readonly head: readonly [string, string]) {}

  /** The script's ARGV: the head and the packed requests. */
  get args(): string[] {
    return [this.head[0], this.head[1], this.packed];
  }
}

/**
 * Packs the release script's KEYS (the job hash per lease) and its one `requests` argument
 * (`<slot>|<token>|` per lease, see scripts.ts, `RELEASE`) for the leases of one script call.
 */
export class ReleasePacker implements BatchCall {
  readonly positions: number[] = [];
  readonly keys: string[] = [];
  private packed = '';

  /** Adds one lease: its job hash key and its `slot|token|` part of the packed argument. */
  add(lockKeys: LockKeys, lease: Lease): void {
    this.keys.push(lockKeys.job);
    this.packed += `${lease.exclusive ? 'x' : lease.fireAt}|${lease.token}|`;
  }

  get args(): string[] {
    return [this.packed];
  }
}

/**
 * Turns the release script's reply (one `1`/`0` per lease) into `results[positions[i]]`:
 * whether the lease was held and live.
 */
export function decodeReleaseReplies(
  reply: unknown,
  positions: readonly number[],
  results: boolean[],
): void {
  if (typeof reply !== 'string' || reply.length !== positions.length) {
    throw new Error(
      `unexpected release reply ${JSON.stringify(reply)} for ${positions.length} leases`,
    );
  }
  for (let i = 0; i < positions.length; i++) results[positions[i]!] = reply.charCodeAt(i) === 49;
}

const LOST_REASONS: Record<string, LostReason> = {
  s: 'stale',
  c: 'claimed',
  e: 'early',
  b: 'behind_mark',
};

/**
 * Turns the claim script's reply (`<now>` then `|<answer>` per request, see scripts.ts,
 * `CLAIM`) into the {@link ClaimResult}s of `requests[positions[i]]`, written to
 * `results[positions[i]]`. Reads the numbers digit by digit: no substrings, no arrays.
 */
export function decodeClaimReplies(
  reply: unknown,
  requests: readonly ClaimRequest[],
  positions: readonly number[] | null,
  results: ClaimResult[],
): void {
  if (typeof reply !== 'string') throw new Error(`unexpected claim reply ${JSON.stringify(reply)}`);
  const cursor = new Cursor(reply);
  const backendTime = cursor.number();
  const count = positions ? positions.length : requests.length;
  for (let i = 0; i < count; i++) {
    const position = positions ? positions[i]! : i;
    const request = requests[position]!;
    if (reply.charCodeAt(cursor.at++) !== BAR) cursor.fail();
    const code = reply.charCodeAt(cursor.at++);
    if (code === X || code === W) {
      const token = cursor.number();
      if (reply.charCodeAt(cursor.at++) !== COMMA) cursor.fail();
      const expiresAt = cursor.number();
      results[position] = {
        status: 'won',
        lease: {
          key: request.key,
          fireAt: request.fireAt,
          owner: request.owner,
          token,
          expiresAt,
          exclusive: code === X,
        },
        backendTime,
      };
    } else if (code === B) {
      results[position] = { status: 'busy', key: request.key, fireAt: request.fireAt, backendTime };
    } else if (code === L) {
      const reason = LOST_REASONS[reply[cursor.at]!];
      if (!reason) cursor.fail();
      cursor.skipWord();
      results[position] = {
        status: 'lost',
        key: request.key,
        fireAt: request.fireAt,
        reason: reason!,
        backendTime,
      };
    } else cursor.fail();
  }
  if (cursor.at !== reply.length) cursor.fail();
}

const BAR = 0x7c; // |
const COMMA = 0x2c; // ,
const MINUS = 0x2d; // -
const X = 0x58; // X
const W = 0x57; // W
const B = 0x42; // B
const L = 0x4c; // L

/** Reads a claim reply left to right. */
class Cursor {
  at = 0;
  constructor(private readonly text: string) {}

  /** The decimal integer at the cursor (exact below 2^53, which Redis' `%d` numbers stay). */
  number(): number {
    const { text } = this;
    const negative = text.charCodeAt(this.at) === MINUS;
    if (negative) this.at++;
    const start = this.at;
    let value = 0;
    for (let code = text.charCodeAt(this.at); code >= 48 && code <= 57; ) {
      value = value * 10 + (code - 48);
      code = text.charCodeAt(++this.at);
    }
    if (this.at === start) this.fail();
    return negative ? -value : value;
  }

  /** Moves past a lost reason (lower-case letters and `_`). */
  skipWord(): void {
    const { text } = this;
    let code = text.charCodeAt(this.at);
    while ((code >= 97 && code <= 122) || code === 95) code = text.charCodeAt(++this.at);
  }

  fail(): never {
    throw new Error(`unexpected claim reply ${JSON.stringify(this.text)} at ${this.at}`);
  }
}

/** The lease hash field of a lease: `x` for the exclusive lease, else its fire time. */
export const leaseSlotOf = (lease: Pick<Lease, 'exclusive' | 'fireAt'>): string =>
  lease.exclusive ? 'x' : String(lease.fireAt);

/** Parses one claim record as the inspect script returns it: `fireAt|outcome|token|owner`. */
export function parseRecord(member: string): ClaimedFire {
  const match = /^(-?\d+)\|([wb])\|(\d*)\|([\s\S]*)$/.exec(member);
  if (!match) throw new Error(`unexpected claim record ${JSON.stringify(member)}`);
  return {
    fireAt: Number(match[1]),
    outcome: match[2] === 'w' ? 'won' : 'busy',
    token: match[3] ? Number(match[3]) : null,
    owner: match[4] ?? '',
  };
}

/** Parses one lease hash value, `token|expiresAt|fireAt|owner`, into the lease of `key`. */
export function parseLease(key: string, exclusive: boolean, value: string): Lease {
  const match = /^(\d+)\|(-?\d+)\|(-?\d+)\|([\s\S]*)$/.exec(value);
  if (!match) throw new Error(`unexpected lease ${JSON.stringify(value)}`);
  return {
    key,
    fireAt: Number(match[3]),
    owner: match[4] ?? '',
    token: Number(match[1]),
    expiresAt: Number(match[2]),
    exclusive,
  };
}

function assertFireAt(fireAt: unknown): asserts fireAt is number {
  if (!Number.isSafeInteger(fireAt)) {
    throw new InvalidOptionError(
      'fireAt',
      `must be an integer epoch ms (a safe integer), got ${String(fireAt)}.`,
    );
  }
}
