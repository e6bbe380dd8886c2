import { type Lease, MemoryLock } from '@fleetcron/core';
import { internals } from './internals.js';

/**
 * Deliberately broken `withdraw`s: the withdraw scenario must fail against each (and pass on
 * MemoryLock, the reference).
 */

/** (w1) Keeps the fire's claim record: the fire can never be claimed again (it burns). */
export class WithdrawKeepsRecord extends MemoryLock {
  override async withdraw(lease: Lease): Promise<boolean> {
    return this.release(lease);
  }
}

/** (w2) Clears the lease slot whatever token holds it (a live lease of another fire too). */
export class WithdrawIgnoresLeaseToken extends MemoryLock {
  override async withdraw(lease: Lease): Promise<boolean> {
    const withdrawn = await super.withdraw(lease);
    if (withdrawn) {
      internals(this)
        .keys.get(lease.key)
        ?.leases.delete(lease.exclusive ? 'x' : String(lease.fireAt));
    }
    return withdrawn;
  }
}

/** (w3) Withdraws whatever record the fire has, ignoring the token. */
export class WithdrawIgnoresRecordToken extends MemoryLock {
  override async withdraw(lease: Lease): Promise<boolean> {
    const record = internals(this).keys.get(lease.key)?.fires.get(lease.fireAt);
    return super.withdraw(record?.token != null ? { ...lease, token: record.token } : lease);
  }
}
