import { defineConfig } from 'tsup';
import { baseTsup } from '../../tsup.config.base.js';

// The console (HTML, CSS and the browser script) is compiled into the bundle as strings: at run
// time the handler serves it from memory and loads nothing from outside.
export default defineConfig({ ...baseTsup });
