import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signWebhook, verifyWebhookSignature } from '../src/signature.js';

const SECRET = 'a-shared-secret-of-32-characters';
const BODY = '{"version":1}';
const T = 1_767_225_600;

describe('signWebhook / verifyWebhookSignature', () => {
  it('signs HMAC-SHA256 of "<t>.<body>" in hex', () => {
    const expected = createHmac('sha256', SECRET).update(`${T}.${BODY}`).digest('hex');
    expect(signWebhook(BODY, SECRET, T)).toBe(`t=${T},v1=${expected}`);
  });

  it('accepts its own signature within the tolerance, from a string or bytes', () => {
    const header = signWebhook(BODY, SECRET, T);
    expect(verifyWebhookSignature({ body: BODY, header, secret: SECRET, nowSec: T + 299 })).toEqual(
      { valid: true, timestampSec: T },
    );
    expect(
      verifyWebhookSignature({
        body: new TextEncoder().encode(BODY),
        header: [header],
        secret: SECRET,
        nowSec: T - 10,
      }).valid,
    ).toBe(true);
  });

  it.each<[string, Partial<Parameters<typeof verifyWebhookSignature>[0]>, string]>([
    ['no header', { header: undefined }, 'missing'],
    ['a header without v1', { header: `t=${T}` }, 'malformed'],
    ['a header with a short digest', { header: `t=${T},v1=abc` }, 'malformed'],
    ['a timestamp past the tolerance', { nowSec: T + 301 }, 'expired'],
    ['a timestamp from the future', { nowSec: T - 301 }, 'expired'],
    ['another body', { body: '{"version":2}' }, 'mismatch'],
    ['another secret', { secret: 'another-secret-of-32-characters!' }, 'mismatch'],
    ['a narrower tolerance', { toleranceSec: 10, nowSec: T + 11 }, 'expired'],
  ])('refuses %s', (_label, change, problem) => {
    const input = {
      body: BODY,
      header: signWebhook(BODY, SECRET, T),
      secret: SECRET,
      nowSec: T,
      ...change,
    };
    expect(verifyWebhookSignature(input)).toEqual({ valid: false, problem });
  });
});
