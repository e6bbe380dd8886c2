export type { AdminActionRecord, JobAction, ScheduleAction } from './api/audit.js';
export type { AdminAuditFleet } from './api/audit-route.js';
export {
  fireOutcome,
  type RunRequestFleet,
  type RunRequestView,
  runRequestView,
} from './api/run-request-view.js';
export * from './handler.js';
export type { AllowedHosts } from './http/allowed-hosts.js';
export type {
  AdminAuthOptions,
  AdminPrincipal,
  AdminRole,
  AdminToken,
  AuthorizeHook,
} from './http/auth.js';
export { MAX_PRINCIPAL_NAME_LENGTH } from './http/auth.js';
export { MUTATION_HEADER } from './http/cross-site.js';
export type { FailedAuthLimitOptions } from './http/failed-auth-limit.js';
export type { ErrorBody } from './http/responses.js';
export { CONSOLE_CSP } from './http/security-headers.js';
export * from './node-adapter.js';
