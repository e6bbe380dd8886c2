import type { ClaimRequest } from '@fleetcron/core';
import { describe, expect, it } from 'vitest';
import { parseClaimManyReply } from '../src/claim-many-reply.js';

// The packed reply of a batch claim: every answer in place, and a reply that does not hold
// exactly one well-formed answer per request is refused (null), never turned into answers.

const request = (key: string, fireAt: number): ClaimRequest => ({
  key,
  fireAt,
  owner: 'me',
  leaseMs: 1000,
  exclusive: true,
});
const requests = [request('a', 1), request('b', 2), request('c', 3), request('d', 4)];

describe('parseClaimManyReply', () => {
  it('puts each answer at its position, whatever the order of the reply', () => {
    const reply = '3,l,stale,,,;1,w,,7,5000,t;4,l,,,,;2,b,,,,';
    expect(parseClaimManyReply(requests, reply, 4000)).toEqual([
      {
        status: 'won',
        lease: { key: 'a', fireAt: 1, owner: 'me', token: 7, expiresAt: 5000, exclusive: true },
        backendTime: 4000,
      },
      { status: 'busy', key: 'b', fireAt: 2, backendTime: 4000 },
      { status: 'lost', key: 'c', fireAt: 3, reason: 'stale', backendTime: 4000 },
      { status: 'lost', key: 'd', fireAt: 4, reason: 'claimed', backendTime: 4000 },
    ]);
    const perFire = parseClaimManyReply([request('a', 1)], '1,w,,8,9000,', 1);
    expect(perFire?.[0]).toMatchObject({ status: 'won', lease: { token: 8, exclusive: false } });
  });

  it.each([
    ['an answer missing', '1,b,,,,;2,b,,,,;3,b,,,,'],
    ['an answer twice', '1,b,,,,;1,b,,,,;2,b,,,,;3,b,,,,'],
    ['a position out of range', '1,b,,,,;2,b,,,,;3,b,,,,;5,b,,,,'],
    ['an unknown status', '1,b,,,,;2,b,,,,;3,b,,,,;4,x,,,,'],
    ['an unknown reason', '1,b,,,,;2,b,,,,;3,b,,,,;4,l,gone,,,'],
    ['a win without a token', '1,b,,,,;2,b,,,,;3,b,,,,;4,w,,,5000,t'],
    ['a win without a lease end', '1,b,,,,;2,b,,,,;3,b,,,,;4,w,,7,,t'],
    ['no answers', null],
  ])('refuses a reply with %s', (_, reply) => {
    expect(parseClaimManyReply(requests, reply, 4000)).toBeNull();
  });

  it('refuses a reply without the backend time', () => {
    expect(parseClaimManyReply([request('a', 1)], '1,b,,,,', Number.NaN)).toBeNull();
  });
});
