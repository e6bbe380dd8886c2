export { BACKEND, callEtcd, type Deadline } from './call-etcd.js';
export { randomLeaseId } from './lease-id.js';
export {
  FIRST_SKIP_MS,
  MAX_SKIP_MS,
  MemberSkippedError,
  memberPolicies,
  SUSPECT_AFTER_MS,
} from './member-policy.js';
export { SINGLE_ATTEMPT } from './single-attempt.js';
export { singleAttemptClientOf } from './single-attempt-client.js';
