/**
 * Catch-up at `start()`: which fires of a job were missed while the whole fleet was down (the
 * plan, from the lock's mark), and the pass that claims them before the job's regular fires.
 */
export { CatchUpPass } from './catch-up-pass.js';
