/**
 * A won lease while this instance holds it: its local deadline, the keeper that renews it, and
 * how it is given back (released after a run, handed back when it never ran).
 */
export { HeldLease, handBackClaim } from './held-lease.js';
