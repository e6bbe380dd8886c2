export { BACKEND, callEtcd, type Deadline } from './call-etcd.js';
export { randomLeaseId } from './lease-id.js';
export { SINGLE_ATTEMPT } from './single-attempt.js';
export { singleAttemptClientOf } from './single-attempt-client.js';
