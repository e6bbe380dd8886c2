import type { ClaimRequest, ClaimResult, LostReason } from '@fleetcron/core';

/** The lost reasons the claim function answers (anything else in a reply is a broken reply). */
const LOST_REASONS: ReadonlySet<string> = new Set<LostReason>([
  'claimed',
  'stale',
  'early',
  'behind_mark',
]);

/**
 * The answers of a batch claim, in request order, from the packed text `claimManySql` returns:
 * answers separated by `;`, fields by `,` (1-based position, status letter `w`/`b`/`l`, lost
 * reason, token, lease end, `t` for an exclusive lease; empty when NULL). Every field is a
 * number, a letter or a reason name, so neither separator can occur inside one.
 *
 * Returns `null` when the reply does not hold exactly one well-formed answer per request (the
 * caller reports the batch as failed, never a made-up answer).
 */
export function parseClaimManyReply(
  requests: readonly ClaimRequest[],
  answers: string | null,
  backendTime: number,
): ClaimResult[] | null {
  if (answers === null || !Number.isSafeInteger(backendTime)) return null;
  const results: (ClaimResult | undefined)[] = new Array(requests.length);
  let count = 0;
  for (const answer of answers.split(';')) {
    const [position, status, reason, token, expiresAt, exclusive] = answer.split(',');
    const i = Number(position) - 1;
    const request = requests[i];
    if (!request || results[i] !== undefined) return null;
    const { key, fireAt } = request;
    if (status === 'w') {
      const lease = {
        key,
        fireAt,
        owner: request.owner,
        token: Number(token),
        expiresAt: Number(expiresAt),
        exclusive: exclusive === 't',
      };
      if (!token || !expiresAt || !Number.isSafeInteger(lease.token + lease.expiresAt)) return null;
      results[i] = { status: 'won', lease, backendTime };
    } else if (status === 'b') {
      results[i] = { status: 'busy', key, fireAt, backendTime };
    } else if (status === 'l') {
      const lost = (reason || 'claimed') as LostReason;
      if (!LOST_REASONS.has(lost)) return null;
      results[i] = { status: 'lost', key, fireAt, reason: lost, backendTime };
    } else {
      return null;
    }
    count++;
  }
  return count === requests.length ? (results as ClaimResult[]) : null;
}
