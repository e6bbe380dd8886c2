import { it, expect } from 'vitest';
it('dbg', async () => {
  console.log('ARGV', process.execArgv, process.env.NODE_OPTIONS);
  expect(1).toBe(1);
});
