export * from './stall-link.js';
