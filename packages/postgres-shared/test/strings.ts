/** Strings that exercise every branch of the encoding. */
export const TRICKY = [
  '',
  'plain job',
  'nul\0inside',
  '\0',
  '\0\0',
  'back\\slash',
  'back\\slash and nul\0',
  '\\0 looks like an escape',
  '\uFFFF starts with the marker',
  '\uFFFF',
  '\uFFFF\\0',
  'ends with marker \uFFFF',
  'emoji 🚀 and ümlauts',
];
