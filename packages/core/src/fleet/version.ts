/**
 * The version of `@fleetcron/core` (equal to its package.json `version`, checked by a test), for
 * `InstanceRecord.version` in registry heartbeats.
 */
export const CORE_VERSION = '0.1.0';
