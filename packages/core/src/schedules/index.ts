/**
 * Schedules as data: the stored shape and its checks, the `ScheduleStore` contract (with the
 * in-memory one), the client operations `FleetClient` exposes, and `ScheduleServer`, which
 * serves stored schedules with handlers registered in code.
 */

export { MemorySchedules } from './memory-schedules.js';
export * from './schedule.js';
export * from './schedule-client.js';
export * from './schedule-errors.js';
export * from './schedule-handler.js';
export { scheduleJob } from './schedule-job.js';
export * from './schedule-server.js';
export * from './schedule-store.js';
export * from './validate-schedule.js';
