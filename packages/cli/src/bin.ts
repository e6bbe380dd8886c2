#!/usr/bin/env node
import { runCli } from './main.js';

// Set the exit code and let Node exit by itself once every client is closed.
runCli(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
