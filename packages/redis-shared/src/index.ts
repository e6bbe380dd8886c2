export * from './abortable-command.js';
export * from './call.js';
export * from './guard-error-events.js';
export * from './key-part.js';
export * from './prefix.js';
export type * from './redis-client.js';
export * from './redis-commands.js';
export * from './redis-script.js';
export * from './with-timeout.js';
