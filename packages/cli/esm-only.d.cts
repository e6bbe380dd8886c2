// This package is ESM only: `require()` of it throws ERR_FLEETCRON_ESM_ONLY. From CommonJS, load
// it with `await import('<package name>')`; the types then come from its `import` entry.
export {};
