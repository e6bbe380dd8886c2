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

  /** @param head The script's first two ARGV: windowMs and earlyToleranceMs. */
  constructor(private readonly head: readonly [string, string]) {}

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
    const part = owner === this.owner ? ':' : ownerPart(owner);
    this.owner = owner;
    this.packed += `${this.fireAtText}|${lease}|${since}|${part}`;
  }

  /** The script's ARGV: the head and the packed requests. */
  get args(): string[] {
    return [this.head[0], this.head[1], this.packed];
  }
}

let lastOwner: string | undefined;
let lastOwnerPart = '';

/**
 * `<UTF-8 bytes>:<owner>`, how the claim script reads an owner; the last one is kept, since an
 * instance claims with one owner.
 */
function ownerPart(owner: string): string {
  if (owner !== lastOwner) {
    lastOwnerPart = `${Buffer.byteLength(owner)}:${owner}`;
    lastOwner = owner;
  }
  return lastOwnerPart;
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
  positions: readonly number[],
  results: ClaimResult[],
): void {
  const cursor = new Cursor(reply);
  const backendTime = cursor.number();
  for (const position of positions) {
    results[position] = cursor.answer(requests[position]!, backendTime);
  }
  cursor.end();
}

/** {@link decodeClaimReplies} for the reply of a call of one request. */
export function decodeClaimReply(reply: unknown, request: ClaimRequest): ClaimResult {
  const cursor = new Cursor(reply);
  const result = cursor.answer(request, cursor.number());
  cursor.end();
  return result;
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
  private readonly text: string;

  constructor(reply: unknown) {
    if (typeof reply !== 'string') {
      throw new Error(`unexpected claim reply ${JSON.stringify(reply)}`);
    }
    this.text = reply;
  }

  /** The answer `|<code>...` at the cursor, for `request`. */
  answer(request: ClaimRequest, backendTime: number): ClaimResult {
    const { text } = this;
    if (text.charCodeAt(this.at++) !== BAR) this.fail();
    const code = text.charCodeAt(this.at++);
    if (code === X || code === W) {
      const token = this.number();
      if (text.charCodeAt(this.at++) !== COMMA) this.fail();
      const expiresAt = this.number();
      return {
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
    }
    if (code === B)
      return { status: 'busy', key: request.key, fireAt: request.fireAt, backendTime };
    const reason = code === L ? LOST_REASONS[text[this.at]!] : undefined;
    if (!reason) this.fail();
    // past the reason's letters (lower case and `_`)
    let next = text.charCodeAt(this.at);
    while ((next >= 97 && next <= 122) || next === 95) next = text.charCodeAt(++this.at);
    return { status: 'lost', key: request.key, fireAt: request.fireAt, reason, backendTime };
  }

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

  /** Throws unless the whole reply was read. */
  end(): void {
    if (this.at !== this.text.length) this.fail();
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
