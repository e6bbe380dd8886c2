/** Number of hash slots of a Redis Cluster. */
export const CLUSTER_SLOTS = 16_384;

/** CRC16-CCITT (XMODEM) lookup table, the checksum Redis Cluster hashes keys with. */
const CRC16_TABLE = (() => {
  const table = new Uint16Array(256);
  for (let byte = 0; byte < 256; byte++) {
    let crc = byte << 8;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? (crc << 1) ^ 0x1021 : crc << 1;
    table[byte] = crc & 0xffff;
  }
  return table;
})();

const OPEN = 0x7b; // {
const CLOSE = 0x7d; // }

/**
 * The Redis Cluster hash slot of `key` (what `CLUSTER KEYSLOT` answers): CRC16 of the key's UTF-8
 * bytes modulo 16384, or of its hash tag only (the bytes between the first `{` and the first `}`
 * after it, when that is not empty). Lets an adapter group the keys of a batch by slot before
 * sending, so each script call touches one slot (no `CROSSSLOT`).
 */
export function hashSlot(key: string): number {
  const bytes = Buffer.from(key, 'utf8');
  let start = 0;
  let end = bytes.length;
  const open = bytes.indexOf(OPEN);
  if (open !== -1) {
    const close = bytes.indexOf(CLOSE, open + 1);
    if (close > open + 1) {
      start = open + 1;
      end = close;
    }
  }
  let crc = 0;
  for (let i = start; i < end; i++) {
    crc = ((crc << 8) & 0xffff) ^ CRC16_TABLE[((crc >> 8) ^ bytes[i]!) & 0xff]!;
  }
  return crc % CLUSTER_SLOTS;
}
