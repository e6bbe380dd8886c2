import { GRPCDeadlineExceededError, isRecoverableError } from 'etcd3';
import { runOnce } from './single-attempt.js';

/** How long a member is left out after its first failed or slow call, ms. */
export const FIRST_SKIP_MS = 10_000;
/** Longest a member is left out (the skip doubles with each failed probe), ms. */
export const MAX_SKIP_MS = 60_000;
/** A call unanswered this long marks its member as failing (a frozen member never answers), ms. */
export const SUSPECT_AFTER_MS = 1000;

/** The shape of a cockatiel policy that etcd3's connection pool calls (`execute` only). */
export interface CallPolicy {
  execute<T>(
    fn: (context: { signal: AbortSignal; attempt: number }) => PromiseLike<T> | T,
  ): Promise<T>;
}

/**
 * Thrown instead of calling a member that is being left out; etcd3's pool then tries the next
 * member within the same call.
 */
export class MemberSkippedError extends Error {
  constructor(host: string, leftMs: number) {
    super(`etcd member ${host} left out for ${Math.ceil(leftMs)} ms more after a failed call`);
    this.name = 'MemberSkippedError';
  }
}

/** True for failures of the member (no answer in time, unreachable), not of the request. */
function memberFailure(error: unknown): boolean {
  if (error instanceof GRPCDeadlineExceededError) return true;
  return typeof error === 'object' && error !== null && isRecoverableError(error as Error);
}

/** True for a gRPC stream (etcd3 hands streams out of the same policy as unary calls). */
function isStream(value: unknown): boolean {
  const candidate = value as { write?: unknown; on?: unknown } | null;
  return typeof candidate?.write === 'function' && typeof candidate.on === 'function';
}

interface MemberHealth {
  failures: number;
  skipUntil: number;
}

/**
 * Per-member policies for a client given several members (etcd3 calls `host(name)` once per
 * member). Each call runs once. A member whose call failed (unreachable, no answer before the
 * deadline) or has been unanswered for {@link SUSPECT_AFTER_MS} is left out of the next calls
 * for {@link FIRST_SKIP_MS}, doubling with each failed probe up to {@link MAX_SKIP_MS}: etcd3's
 * pool then sends them to another member. An answer ends the skip. A member is never left out
 * while every other member is left out too (a call is not failed for want of a member).
 *
 * Why: etcd3 picks a member at random for every call. With the leader frozen (SIGSTOP), a
 * third of the calls waited out their whole deadline, and a fire was lost whenever every
 * instance's claim drew the frozen member (docs/performance/failover.md).
 */
export function memberPolicies(
  now: () => number = () => performance.now(),
): (host: string) => CallPolicy {
  const members = new Map<string, MemberHealth>();
  const skipped = (health: MemberHealth) => health.skipUntil > now();
  const markFailed = (health: MemberHealth) => {
    health.failures += 1;
    health.skipUntil = now() + Math.min(MAX_SKIP_MS, FIRST_SKIP_MS * 2 ** (health.failures - 1));
  };
  return (host) => {
    const health: MemberHealth = { failures: 0, skipUntil: 0 };
    members.set(host, health);
    return {
      execute(fn) {
        if (skipped(health) && [...members.values()].some((other) => !skipped(other))) {
          return Promise.reject(new MemberSkippedError(host, health.skipUntil - now()));
        }
        let marked = false;
        const suspect = setTimeout(() => {
          marked = true;
          markFailed(health);
        }, SUSPECT_AFTER_MS);
        suspect.unref?.();
        return runOnce.execute(fn).then(
          (value) => {
            clearTimeout(suspect);
            // A stream (keepalive) is returned as soon as it is opened, before the member has
            // answered anything: not an answer. Its errors come back through markFailed.
            if (!isStream(value)) {
              health.failures = 0;
              health.skipUntil = 0;
            }
            return value;
          },
          (error: unknown) => {
            clearTimeout(suspect);
            if (!marked && memberFailure(error)) markFailed(health);
            throw error;
          },
        );
      },
    };
  };
}
