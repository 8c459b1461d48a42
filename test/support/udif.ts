/**
 * Writes small Apple disk images (UDIF .dmg) for tests. Linux has no hdiutil, so the fixture is
 * assembled here from the format's structures (written independently of @balena/udif, whose own
 * writers store 64-bit fields as zeros): data fork, a blkx property list holding a "mish" block
 * table, and the 512-byte "koly" trailer with the data fork's CRC-32. Blocks are raw (the first
 * MiB), zero-fill (all-zero MiBs) and zlib (UDZO, the rest).
 */
import { writeFileSync } from 'node:fs';
import { crc32, deflateSync } from 'node:zlib';

const SECTOR = 512;
const CHUNK = 1024 * 1024;
const KOLY_BYTES = 512;
const MISH_HEADER_BYTES = 204;
const MISH_BLOCK_BYTES = 40;
const BLOCK_ZEROFILL = 0x00000000;
const BLOCK_RAW = 0x00000001;
const BLOCK_UDZO = 0x80000005;
/** LZFSE (ULFO), what current macOS writes by default; its blocks are only labelled so here. */
const BLOCK_LZFSE = 0x80000007;
const BLOCK_TERMINATOR = 0xffffffff;
const CHECKSUM_CRC32 = 2;

function u64(buffer: Buffer, value: number, at: number): void {
  buffer.writeBigUInt64BE(BigInt(value), at);
}

interface BlockEntry {
  type: number;
  sector: number;
  sectors: number;
  offset: number;
  length: number;
}

function mish(sectors: number, blocks: BlockEntry[], blockCount = blocks.length): Buffer {
  const table = Buffer.alloc(MISH_HEADER_BYTES + blocks.length * MISH_BLOCK_BYTES);
  table.write('mish', 0, 'ascii');
  table.writeUInt32BE(1, 4);
  u64(table, 0, 8);
  u64(table, sectors, 16);
  table.writeUInt32BE(blockCount, 200);
  blocks.forEach((b, i) => {
    const at = MISH_HEADER_BYTES + i * MISH_BLOCK_BYTES;
    table.writeUInt32BE(b.type, at);
    u64(table, b.sector, at + 8);
    u64(table, b.sectors, at + 16);
    u64(table, b.offset, at + 24);
    u64(table, b.length, at + 32);
  });
  return table;
}

function plist(blkx: Buffer): string {
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">',
    '<plist version="1.0">',
    '<dict><key>resource-fork</key><dict><key>blkx</key><array><dict>',
    '<key>Attributes</key><string>0x0050</string>',
    '<key>CFName</key><string>whole disk (Apple_HFS : 0)</string>',
    `<key>Data</key><data>${blkx.toString('base64')}</data>`,
    '<key>ID</key><string>0</string>',
    '<key>Name</key><string>whole disk (Apple_HFS : 0)</string>',
    '</dict></array></dict></dict>',
    '</plist>',
  ].join('\n');
}

function koly(dataLength: number, dataCrc: number, xmlLength: number, sectors: number): Buffer {
  const trailer = Buffer.alloc(KOLY_BYTES);
  trailer.write('koly', 0, 'ascii');
  trailer.writeUInt32BE(4, 4); // version
  trailer.writeUInt32BE(KOLY_BYTES, 8);
  trailer.writeUInt32BE(1, 12); // flags
  u64(trailer, 0, 24); // data fork offset
  u64(trailer, dataLength, 32);
  trailer.writeUInt32BE(1, 56); // segment number
  trailer.writeUInt32BE(1, 60); // segment count
  trailer.writeUInt32BE(CHECKSUM_CRC32, 80);
  trailer.writeUInt32BE(32, 84);
  trailer.writeUInt32BE(dataCrc >>> 0, 88);
  u64(trailer, dataLength, 216); // the property list follows the data fork
  u64(trailer, xmlLength, 224);
  trailer.writeUInt32BE(1, 488); // image variant
  u64(trailer, sectors, 492);
  return trailer;
}

/** How a test dmg is made: `lzfse` labels the compressed blocks LZFSE; the others make a hostile one. */
interface DmgOptions {
  lzfse?: boolean;
  /** The block count its table's header claims, in place of the blocks it holds. */
  blockCount?: number;
  /** A zero-fill block of this many sectors after the image's own: a disk it claims, in 40 bytes. */
  claimedZeroSectors?: number;
}

/** Writes `raw` (a multiple of 512 bytes) as a dmg at `path`. */
export function writeDmg(raw: Buffer, path: string, options: DmgOptions = {}): void {
  const blocks: BlockEntry[] = [];
  const data: Buffer[] = [];
  let dataLength = 0;
  for (let at = 0; at < raw.length; at += CHUNK) {
    const chunk = raw.subarray(at, Math.min(raw.length, at + CHUNK));
    const type = chunk.every((b) => b === 0)
      ? BLOCK_ZEROFILL
      : at === 0
        ? BLOCK_RAW
        : options.lzfse === true
          ? BLOCK_LZFSE
          : BLOCK_UDZO;
    const stored =
      type === BLOCK_ZEROFILL ? Buffer.alloc(0) : type === BLOCK_RAW ? Buffer.from(chunk) : deflateSync(chunk);
    blocks.push({
      type,
      sector: at / SECTOR,
      sectors: chunk.length / SECTOR,
      offset: dataLength,
      length: stored.length,
    });
    data.push(stored);
    dataLength += stored.length;
  }
  const claimed = options.claimedZeroSectors ?? 0;
  if (claimed > 0)
    blocks.push({ type: BLOCK_ZEROFILL, sector: raw.length / SECTOR, sectors: claimed, offset: dataLength, length: 0 });
  const end = raw.length / SECTOR + claimed;
  blocks.push({ type: BLOCK_TERMINATOR, sector: end, sectors: 0, offset: dataLength, length: 0 });
  const dataFork = Buffer.concat(data);
  const xml = Buffer.from(plist(mish(end, blocks, options.blockCount)));
  writeFileSync(
    path,
    Buffer.concat([dataFork, xml, koly(dataFork.length, crc32(dataFork), xml.length, raw.length / SECTOR)]),
  );
}
