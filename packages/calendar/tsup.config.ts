import { defineConfig } from 'tsup';
import { baseTsup } from '../../tsup.config.base.js';

export default defineConfig(baseTsup);
