// The `require` entry of an ESM-only package: instead of Node's "No exports main defined", say
// what to do. Loading the package from CommonJS works with a dynamic import.
const { name } = require('./package.json');

const error = new Error(
  `${name} is ESM only and cannot be loaded with require(). From CommonJS, use ` +
    `\`const mod = await import('${name}')\` inside an async function, or make your project ESM ` +
    '("type": "module" in package.json).',
);
error.code = 'ERR_FLEETCRON_ESM_ONLY';
throw error;
