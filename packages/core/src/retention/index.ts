export { historyRetention } from './history-retention.js';
export {
  DEFAULT_RETENTION_EVERY_MS,
  DEFAULT_RETENTION_JOB_NAME,
  DEFAULT_RETENTION_KEEP_LAST,
  DEFAULT_RETENTION_MAX_AGE_MS,
  DEFAULT_RETENTION_ROWS_PER_CALL,
  DEFAULT_RETENTION_ROWS_PER_RUN,
  type HistoryRetentionOptions,
  type RetentionReport,
} from './retention-options.js';
