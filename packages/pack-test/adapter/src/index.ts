export * from './example-lock.js';
