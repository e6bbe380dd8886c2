/** A job name or instance id as one key segment: base64url of its UTF-8 (no `/`, any text). */
export function keyPart(text: string): string {
  return Buffer.from(text, 'utf8').toString('base64url');
}

/** Decodes a {@link keyPart}. */
export function fromKeyPart(part: string): string {
  return Buffer.from(part, 'base64url').toString('utf8');
}

/** `startedAt` as 16 zero-padded digits: key order is exactly `(startedAt, id)` order. */
export function padTime(ms: number): string {
  return String(ms).padStart(16, '0');
}

/**
 * The store's key layout under `prefix`:
 * - `e/<job>/<startedAt 16 digits>:<id>` → execution JSON (history, ordered by key);
 * - `x/<job>/<id>` → the execution's `e/` key suffix (to move it when `startedAt` changes);
 * - `p/<job>` → pause state JSON `{ paused, pausedBy, pausedAt }`;
 * - `o/<job>` → last outcome JSON `{ lastStatus, lastFireAt, lastFinishedAt }`;
 * - `i/<instance>` → instance record JSON, attached to an etcd lease of 3 heartbeats;
 * - `r/<job>/<requestedAt 16 digits>:<id>` → run request JSON (the request, its last take and
 *   its decision: `RunRequestRecord`);
 * - `q/<request id>` → the request's `r/` key (to find it by id);
 * - `s/<schedule id>` → stored schedule JSON (a removed one stays as its tombstone). Schedule ids
 *   are ASCII (core's `checkScheduleId`), so key order is id order;
 * - `a/<audit entry id>` → the entry's job, oldest first (what the bounded prune reads);
 * - `n/<inverted entry id>` → audit entry JSON, newest first (what `listAudit` reads);
 * - `j/<job>/<inverted entry id>` → the same entry JSON, the job's own audit index, newest first.
 *   Both read in etcd's own key order: a range sorted otherwise makes the server read and sort
 *   the whole range (see `etcd-audit.ts`).
 */
export class StoreKeys {
  constructor(readonly prefix: string) {}

  /** Prefix of a job's executions. */
  executions(job: string): string {
    return `${this.prefix}e/${keyPart(job)}/`;
  }

  /** Prefix of every execution of every job. */
  allExecutions(): string {
    return `${this.prefix}e/`;
  }

  /** Member of an execution inside {@link executions}. */
  member(startedAt: number, id: string): string {
    return `${padTime(startedAt)}:${id}`;
  }

  /** Index key of an execution id. */
  index(job: string, id: string): string {
    return `${this.prefix}x/${keyPart(job)}/${id}`;
  }

  /** Pause state key of a job. */
  pause(job: string): string {
    return `${this.prefix}p/${keyPart(job)}`;
  }

  /** Last outcome key of a job. */
  outcome(job: string): string {
    return `${this.prefix}o/${keyPart(job)}`;
  }

  /** Prefix of every pause state (`kind` `p`) or last outcome (`kind` `o`). */
  allOf(kind: 'p' | 'o'): string {
    return `${this.prefix}${kind}/`;
  }

  /** Registry key of an instance. */
  instance(instanceId: string): string {
    return `${this.prefix}i/${keyPart(instanceId)}`;
  }

  /** Prefix of the registry. */
  allInstances(): string {
    return `${this.prefix}i/`;
  }

  /** Prefix of a job's run requests. */
  requests(job: string): string {
    return `${this.prefix}r/${keyPart(job)}/`;
  }

  /** Key of a run request: under {@link requests}, in `(requestedAt, id)` order. */
  runRequest(job: string, requestedAt: number, id: string): string {
    return `${this.requests(job)}${padTime(requestedAt)}:${id}`;
  }

  /** Index key of a run request id: holds the request's key. */
  requestIndex(id: string): string {
    return `${this.prefix}q/${id}`;
  }

  /** Prefix of every run request. */
  allRequests(): string {
    return `${this.prefix}r/`;
  }

  /** Key of a stored schedule (or its tombstone). */
  schedule(id: string): string {
    return `${this.prefix}s/${id}`;
  }

  /** Prefix of every stored schedule: the range `listSchedules` reads and the watch covers. */
  allSchedules(): string {
    return `${this.prefix}s/`;
  }

  /** Key of an audit entry in append order (oldest first): holds the entry's job. */
  auditAge(id: string): string {
    return `${this.prefix}a/${id}`;
  }

  /** Prefix of every audit entry in append order. */
  allAuditAges(): string {
    return `${this.prefix}a/`;
  }

  /** Key of an audit entry, newest first (`inverted` is `invertAuditId(id)`). */
  audit(inverted: string): string {
    return `${this.prefix}n/${inverted}`;
  }

  /** Prefix of every audit entry, newest first. */
  allAudit(): string {
    return `${this.prefix}n/`;
  }

  /** Key of an audit entry in its job's index, newest first. */
  jobAudit(job: string, inverted: string): string {
    return `${this.jobAudits(job)}${inverted}`;
  }

  /** Prefix of a job's audit index. */
  jobAudits(job: string): string {
    return `${this.prefix}j/${keyPart(job)}/`;
  }
}
