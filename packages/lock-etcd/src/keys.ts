/**
 * The etcd key layout of {@link EtcdLock}. Every key starts with the adapter's `prefix`
 * (default `fleetcron/`); job names are URI-encoded so that a `/` in a name can never make one
 * job's keys a prefix range of another's.
 *
 * ```text
 * {prefix}c/{job}/{fireAt}   claim record of one fire: {"owner","outcome"}; token = create_revision
 * {prefix}x/{job}            the job's exclusive lease: {"owner","fireAt","expiresAt"}
 * {prefix}f/{job}/{fireAt}   the lease of one non-exclusive fire (same value)
 * {prefix}m/{job}            the job's catch-up mark: the newest claimed fireAt, encoded as below
 *                            (no lease: never expires; only ever replaced by a newer fire)
 * ```
 *
 * `fireAt` is written as 16 zero-padded digits so keys sort by time in `etcdctl get --prefix`.
 */

/** Builds and parses the keys of one adapter prefix. */
export class KeyLayout {
  readonly prefix: string;

  constructor(prefix: string) {
    this.prefix = prefix;
  }

  /** Claim record of fire `fireAt` of job `key`. */
  claim(key: string, fireAt: number): Buffer {
    return Buffer.from(`${this.claimPrefixText(key)}${encodeFireAt(fireAt)}`);
  }

  /** Prefix of every claim record of job `key`. */
  claimPrefix(key: string): Buffer {
    return Buffer.from(this.claimPrefixText(key));
  }

  /** Prefix of every claim record under this adapter prefix (all jobs). */
  allClaimsPrefix(): Buffer {
    return Buffer.from(`${this.prefix}c/`);
  }

  /** Exclusive lease key of job `key`. */
  exclusive(key: string): Buffer {
    return Buffer.from(`${this.prefix}x/${encodeURIComponent(key)}`);
  }

  /** Catch-up mark key of job `key` (value: {@link encodeFireAt} of the newest claimed fire). */
  mark(key: string): Buffer {
    return Buffer.from(`${this.prefix}m/${encodeURIComponent(key)}`);
  }

  /** Lease key of non-exclusive fire `fireAt` of job `key`. */
  perFire(key: string, fireAt: number): Buffer {
    return Buffer.from(`${this.perFirePrefixText(key)}${encodeFireAt(fireAt)}`);
  }

  /** Prefix of every non-exclusive lease key of job `key`. */
  perFirePrefix(key: string): Buffer {
    return Buffer.from(this.perFirePrefixText(key));
  }

  /** The lease slot of a lease: the exclusive key or the per-fire key. */
  slot(lease: { key: string; fireAt: number; exclusive: boolean }): Buffer {
    return lease.exclusive ? this.exclusive(lease.key) : this.perFire(lease.key, lease.fireAt);
  }

  private claimPrefixText(key: string): string {
    return `${this.prefix}c/${encodeURIComponent(key)}/`;
  }

  private perFirePrefixText(key: string): string {
    return `${this.prefix}f/${encodeURIComponent(key)}/`;
  }
}

/** Encodes a fire time so that non-negative integers sort lexicographically by value. */
export function encodeFireAt(fireAt: number): string {
  return fireAt >= 0 && Number.isInteger(fireAt)
    ? String(fireAt).padStart(16, '0')
    : String(fireAt);
}

/** Parses the fire time at the end of a claim or per-fire key. */
export function fireAtOfKey(key: Buffer): number {
  const text = key.toString();
  return Number(text.slice(text.lastIndexOf('/') + 1));
}

/** The `range_end` that makes a range request cover every key starting with `prefix`. */
export function prefixEnd(prefix: Buffer): Buffer {
  const end = Buffer.from(prefix);
  for (let i = end.length - 1; i >= 0; i--) {
    const byte = end[i] as number;
    if (byte < 0xff) {
      end[i] = byte + 1;
      return end.subarray(0, i + 1);
    }
  }
  // Every byte is 0xff: etcd's convention for "to the end of the keyspace".
  return Buffer.from([0]);
}
