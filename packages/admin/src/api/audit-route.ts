import {
  type AuditAction,
  AuditNotKeptError,
  type FleetClient,
  InvalidOptionError,
} from '@fleetcron/core';
import { json } from '../http/responses.js';
import { optionalParam, pageLimit } from './query.js';

/** The part of core's `FleetClient` the audit route uses (optional: older fleets lack it). */
export type AdminAuditFleet = Partial<Pick<FleetClient, 'audit'>>;

/** Largest audit page, entries. */
const MAX_AUDIT_LIMIT = 200;

/** Reads `?before=` (epoch ms): `null` when absent. @throws InvalidOptionError (`before`). */
function beforeOf(params: URLSearchParams): number | null {
  const raw = optionalParam(params, 'before');
  if (raw === null) return null;
  const before = Number(raw);
  if (!Number.isFinite(before)) {
    throw new InvalidOptionError('before', `must be a time in epoch ms, got ${raw}.`);
  }
  return before;
}

/**
 * `GET api/audit?job=&action=a,b&before=&cursor=&limit=`: one page of the store's audit log,
 * newest first (`{ entries, nextCursor }`); 501 `AUDIT_NOT_KEPT` when the store keeps none.
 */
export async function getAudit(
  fleet: AdminAuditFleet,
  backend: () => Promise<string>,
  params: URLSearchParams,
): Promise<Response> {
  if (typeof fleet.audit !== 'function') throw new AuditNotKeptError(await backend());
  const actions = optionalParam(params, 'action');
  const page = await fleet.audit({
    limit: pageLimit(params, MAX_AUDIT_LIMIT, 50),
    job: optionalParam(params, 'job'),
    action: actions === null ? null : (actions.split(',').map((a) => a.trim()) as AuditAction[]),
    before: beforeOf(params),
    cursor: optionalParam(params, 'cursor'),
  });
  return json(200, page);
}
