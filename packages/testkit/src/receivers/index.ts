export * from './http-receiver.js';
export * from './smtp-receiver.js';
