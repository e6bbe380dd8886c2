import { baseVitest } from '../../vitest.config.base.js';

export default baseVitest();
