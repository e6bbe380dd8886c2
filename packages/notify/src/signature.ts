import { createHmac, timingSafeEqual } from 'node:crypto';

/** Header carrying the signature: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`. */
export const SIGNATURE_HEADER = 'x-fleetcron-signature';

/** Default window, in seconds, in which a receiver accepts a signature's timestamp. */
export const DEFAULT_SIGNATURE_TOLERANCE_S = 300;

/**
 * The signature header value for `body` sent at `timestampSec` (unix seconds): the hex HMAC-SHA256,
 * keyed with `secret`, of `${timestampSec}.${body}`. Signing the timestamp with the body lets a
 * receiver refuse a captured request replayed later.
 */
export function signWebhook(body: string, secret: string, timestampSec: number): string {
  const digest = createHmac('sha256', secret).update(`${timestampSec}.${body}`).digest('hex');
  return `t=${timestampSec},v1=${digest}`;
}

/** Why {@link verifyWebhookSignature} refused a request. */
export type SignatureProblem = 'missing' | 'malformed' | 'expired' | 'mismatch';

/** What {@link verifyWebhookSignature} checks. */
export interface VerifyWebhookInput {
  /** The raw request body, exactly as received (before any JSON parsing). */
  body: string | Uint8Array;
  /** The `x-fleetcron-signature` header value (`undefined` when absent). */
  header: string | string[] | undefined | null;
  /** The shared secret the sender signs with. */
  secret: string;
  /** Largest accepted distance between the timestamp and now, seconds. Default 300. */
  toleranceSec?: number;
  /** Now, unix seconds. Default `Date.now() / 1000`. */
  nowSec?: number;
}

/**
 * Checks a webhook request on the receiver's side: the header parses, its timestamp is within
 * `toleranceSec` of now (a replayed old request is refused) and its HMAC matches the raw body
 * (compared in constant time). Pass the body exactly as received.
 */
export function verifyWebhookSignature(
  input: VerifyWebhookInput,
): { valid: true; timestampSec: number } | { valid: false; problem: SignatureProblem } {
  const header = Array.isArray(input.header) ? input.header[0] : input.header;
  if (!header) return { valid: false, problem: 'missing' };
  const fields = new Map<string, string>();
  for (const part of header.split(',')) {
    const at = part.indexOf('=');
    if (at > 0) fields.set(part.slice(0, at).trim(), part.slice(at + 1).trim());
  }
  const t = fields.get('t');
  const v1 = fields.get('v1');
  if (!t || !/^\d{1,12}$/.test(t) || !v1 || !/^[0-9a-f]{64}$/.test(v1)) {
    return { valid: false, problem: 'malformed' };
  }
  const timestampSec = Number(t);
  const nowSec = input.nowSec ?? Date.now() / 1000;
  if (Math.abs(nowSec - timestampSec) > (input.toleranceSec ?? DEFAULT_SIGNATURE_TOLERANCE_S)) {
    return { valid: false, problem: 'expired' };
  }
  const body =
    typeof input.body === 'string' ? input.body : Buffer.from(input.body).toString('utf8');
  const expected = Buffer.from(signWebhook(body, input.secret, timestampSec).slice(-64), 'hex');
  const given = Buffer.from(v1, 'hex');
  return timingSafeEqual(expected, given)
    ? { valid: true, timestampSec }
    : { valid: false, problem: 'mismatch' };
}
