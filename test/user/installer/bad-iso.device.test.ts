import { copyFileSync, readdirSync, readFileSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { MiB } from '../../../common/domain/units.js';
import { assertTestTarget, collect, spawnCli } from '../../support/cli.js';
import { describeDevices } from '../../support/device-suite.js';
import { efiInstallerIso } from '../../support/installer-fixtures.js';
import { discFixture } from '../../support/iso-fixtures.js';
import { createLoop, digestFile, scratchDir } from '../../support/loop-device.js';

const SECTOR = 2048;
/** Each refusal must come within these, whole process (GNU time's elapsed seconds and peak RSS). */
const MAX_SECONDS = 10;
const MAX_RSS_KB = 300 * 1024;

/** A copy of `iso` in a fresh folder, changed by `change` (in its bytes, or in the file itself when it returns null). */
function corrupted(iso: string, change: (bytes: Buffer, path: string) => Buffer | null | void): string {
  const path = join(scratchDir(), 'bad.iso');
  copyFileSync(iso, path);
  const bytes = readFileSync(path);
  const changed = change(bytes, path);
  if (changed !== null) writeFileSync(path, changed ?? bytes);
  return path;
}

/** The root directory's records (ISO 9660 primary tree): its LBA and bytes. */
function rootDirectory(bytes: Buffer): { lba: number; records: Buffer } {
  const pvd = 16 * SECTOR;
  const lba = bytes.readUInt32LE(pvd + 156 + 2);
  return { lba, records: bytes.subarray(lba * SECTOR, lba * SECTOR + bytes.readUInt32LE(pvd + 156 + 10)) };
}

/** The byte offset of the root record whose ISO 9660 name starts with `name`. */
function recordOffset(bytes: Buffer, name: string): number {
  const { lba, records } = rootDirectory(bytes);
  for (let at = 0; at < records.length && records[at] !== 0; at += records[at] ?? 1) {
    if (records.toString('latin1', at + 33, at + 33 + name.length) === name) return lba * SECTOR + at;
  }
  throw new Error(`no ${name} in the root`);
}

/** UDF: the first file entry (tag 261) whose information length is `size`. */
function udfFileEntry(bytes: Buffer, size: number): number {
  for (let at = 257 * SECTOR; at < bytes.length; at += SECTOR) {
    if (bytes.readUInt16LE(at) === 261 && bytes.readBigUInt64LE(at + 56) === BigInt(size)) return at;
  }
  throw new Error(`no UDF file entry of ${size} bytes`);
}

/** The root folder's file entry: the file set descriptor's root ICB, in the partition. */
function udfRootEntry(bytes: Buffer): { entry: number; partition: number } {
  let partition = 0;
  let fileSet = 0;
  for (let at = 16 * SECTOR; at < 300 * SECTOR; at += SECTOR) {
    const tag = bytes.readUInt16LE(at);
    if (tag === 5) partition = bytes.readUInt32LE(at + 188) * SECTOR;
    if (tag === 6) fileSet = bytes.readUInt32LE(at + 252);
  }
  return { entry: partition + bytes.readUInt32LE(partition + fileSet * SECTOR + 404) * SECTOR, partition };
}

/**
 * A UDF folder of a million entries: the root folder's records replaced by 10^6 file identifiers
 * (40 bytes each, all naming one file) appended to the image, and the root's entry pointing there.
 */
function millionEntries(bytes: Buffer): Buffer {
  const { entry, partition } = udfRootEntry(bytes);
  const target = udfFileEntry(bytes, 3);
  const count = 1_000_000;
  const start = Math.ceil(bytes.length / SECTOR) * SECTOR;
  const fids = Buffer.alloc(count * 40);
  for (let i = 0; i < count; i++) {
    const at = i * 40;
    fids.writeUInt16LE(257, at);
    fids[at + 19] = 2; // L_FI: compression id 8, one character
    fids.writeUInt32LE((target - partition) / SECTOR, at + 24);
    fids[at + 38] = 8;
    fids[at + 39] = 0x41;
  }
  const image = Buffer.concat([bytes, Buffer.alloc(start - bytes.length), fids]);
  image.writeBigUInt64LE(BigInt(fids.length), entry + 56);
  // One short allocation descriptor: the records' length and their block in the partition.
  const adAt = entry + 176 + image.readUInt32LE(entry + 168);
  image.writeUInt32LE(fids.length, adAt);
  image.writeUInt32LE((start - partition) / SECTOR, adAt + 4);
  return image;
}

/**
 * The root folder made a folder whose records live inside its own UDF entry (allocation type 3),
 * holding one record: a folder "A" whose entry is the root's own. It has no extents to know it by.
 */
function inlineLoop(bytes: Buffer): void {
  const { entry, partition } = udfRootEntry(bytes);
  const fid = Buffer.alloc(40);
  fid.writeUInt16LE(257, 0);
  fid[18] = 0x02; // a directory
  fid[19] = 2; // L_FI: compression id 8, one character
  fid.writeUInt32LE(SECTOR, 20);
  fid.writeUInt32LE((entry - partition) / SECTOR, 24);
  fid[38] = 8;
  fid[39] = 0x41;
  fid.copy(bytes, entry + 176 + bytes.readUInt32LE(entry + 168));
  bytes.writeUInt32LE(fid.length, entry + 172);
  bytes.writeUInt16LE((bytes.readUInt16LE(entry + 34) & ~7) | 3, entry + 34);
}

/**
 * A file of the Windows-like ISO (install.wim, or bootmgr: `size` tells which) grown to 4.5 GiB,
 * past FAT32's limit, starting with a WIM header that puts its XML data far past its end: the ISO
 * made sparse to 5 GiB, the file's UDF entry pointed at the new (sparse) space in pieces of just
 * under 1 GiB, the header at their start.
 */
function lyingWim(path: string, size: number, xmlAt = 2n ** 50n): null {
  const bytes = readFileSync(path);
  const { partition } = udfRootEntry(bytes);
  const entry = udfFileEntry(bytes, size);
  const start = Math.ceil(bytes.length / SECTOR) * SECTOR;
  const claimed = 4.5 * 1024 * MiB;
  const piece = 0x40000000 - SECTOR;
  bytes.writeBigUInt64LE(BigInt(claimed), entry + 56);
  const adAt = entry + 176 + bytes.readUInt32LE(entry + 168);
  const pieces = Math.ceil(claimed / piece);
  for (let i = 0; i < pieces; i++) {
    bytes.writeUInt32LE(Math.min(piece, claimed - i * piece), adAt + i * 8);
    bytes.writeUInt32LE((start - partition + i * piece) / SECTOR, adAt + i * 8 + 4);
  }
  bytes.writeUInt32LE(pieces * 8, entry + 172);
  const header = Buffer.alloc(208);
  header.write('MSWIM\0\0\0', 0, 'latin1');
  header.writeUInt32LE(208, 8);
  header.writeUInt16LE(1, 40);
  header.writeUInt16LE(1, 42);
  header.writeUInt32LE(2, 44);
  header.writeBigUInt64LE(4096n, 72); // XML data: 4096 bytes…
  header.writeBigUInt64LE(xmlAt, 80); // …at byte 2^50, unless told
  writeFileSync(path, Buffer.concat([bytes, Buffer.alloc(start - bytes.length), header]));
  truncateSync(path, start + claimed);
  return null;
}

describeDevices('installer mode refuses a broken or hostile ISO with a sentence, in bounded time and memory', () => {
  let efiIso: string;
  let windowsIso: string;
  beforeAll(() => {
    efiIso = efiInstallerIso();
    windowsIso = discFixture(scratchDir(), 'windows');
  });

  const cases: [string, () => string, RegExp][] = [
    [
      'a truncated ISO',
      () =>
        corrupted(efiIso, (_, path) => {
          truncateSync(path, 4 * MiB);
          return null;
        }),
      /is cut short or damaged: .* claims \d+ bytes at byte \d+, past the image's end at 4194304\./,
    ],
    [
      'a directory loop',
      () =>
        corrupted(efiIso, (bytes) => {
          const at = recordOffset(bytes, 'CASPER');
          const root = rootDirectory(bytes).lba;
          bytes.writeUInt32LE(root, at + 2);
          bytes.writeUInt32BE(root, at + 6);
        }),
      /is damaged: a directory at byte \d+ contains itself \(a directory loop\)\./,
    ],
    [
      'a UDF folder whose records live in its own entry, naming that entry',
      () => corrupted(windowsIso, inlineLoop),
      /is damaged: a directory at byte \d+ contains itself \(a directory loop\)\./,
    ],
    [
      'a UDF file whose pieces are not recorded (read as zeros, not as the blocks they name)',
      () =>
        corrupted(windowsIso, (bytes) => {
          const entry = udfFileEntry(bytes, 3);
          const adAt = entry + 176 + bytes.readUInt32LE(entry + 168);
          bytes.writeUInt32LE((bytes.readUInt32LE(adAt) | (1 << 30)) >>> 0, adAt);
        }),
      /: \S+ has pieces the disc does not record \(a sparse UDF file\), which Sluice does not copy\./,
    ],
    [
      'a name with / or ..',
      () =>
        corrupted(efiIso, (bytes) => {
          const at = bytes.indexOf('README.diskdefines', 0, 'latin1');
          bytes.write('../', at, 'latin1');
        }),
      /holds a file named "\.\.\/DME\.diskdefines", which is not a plain file name/,
    ],
    [
      'a file claiming 2^63 bytes',
      () =>
        corrupted(windowsIso, (bytes) => {
          bytes.writeBigUInt64LE(2n ** 63n, udfFileEntry(bytes, 3) + 56);
        }),
      /is damaged: .* claims 9223372036854775808 bytes, but its pieces hold \d+\./,
    ],
    [
      'any file but install.wim over 4 GiB - 1',
      () => corrupted(windowsIso, (_, path) => lyingWim(path, 'bootmgr\n'.length)),
      /holds \/bootmgr, of 4831838208 bytes: FAT32 holds files of at most 4 GiB - 1 byte, so installer mode cannot copy it/,
    ],
    [
      'a WIM header that lies',
      () => corrupted(windowsIso, (_, path) => lyingWim(path, 'MSWIM\0\0\0 (not a real one)'.length)),
      /holds a sources\/install\.wim that is damaged: its header puts its XML data at byte 1125899906842624 \(4096 bytes\), past its end at 4831838208\. Sluice does not split it\./,
    ],
    [
      'a UDF folder of 10^6 entries',
      () => corrupted(windowsIso, millionEntries),
      /has a folder "" of 40000000 bytes of entries, more than any installer disc holds; Sluice stops reading it\./,
    ],
  ];

  it.each(cases)('%s', async (_, make, said) => {
    await expectRefused(make(), said, _);
  });

  it('an install.wim over 4 GiB where wimlib-imagex is not installed: the sentence names the package', async () => {
    const iso = corrupted(windowsIso, (_, path) => lyingWim(path, 'MSWIM\0\0\0 (not a real one)'.length, 208n));
    // PATH without wimlib-imagex: /usr/bin's other commands linked into a folder of their own.
    const bin = scratchDir();
    for (const name of readdirSync('/usr/bin'))
      if (name !== 'wimlib-imagex') symlinkSync(join('/usr/bin', name), join(bin, name));
    await expectRefused(
      iso,
      /holds sources\/install\.wim of 4831838208 bytes, over FAT32's 4 GiB - 1 byte, and splitting it needs wimlib-imagex: install the package wimtools \(Debian, Ubuntu\)/,
      'no splitter',
      { PATH: `${bin}:/usr/sbin:/sbin` },
    );
  });
});

/** Runs installer mode on `iso` under GNU time: refused with `said`, in bounded time and memory, the drive untouched. */
async function expectRefused(iso: string, said: RegExp, what: string, env: Record<string, string> = {}): Promise<void> {
  const loop = createLoop({ size: 64 * MiB });
  assertTestTarget(loop.path);
  const before = digestFile(loop.backing);
  const run = await collect(
    spawnCli(['flash', '--yes', '--iso-mode', 'files', iso, loop.path], {
      wrapper: ['/usr/bin/time', '-f', 'MEASURED %e s %M KB'],
      env,
    }),
  );
  expect(run.code, run.stderr).toBe(1);
  expect(run.stderr).toMatch(said);
  expect(run.stderr).toMatch(/Nothing was written\./);
  const [, seconds, rss] = /MEASURED ([\d.]+) s (\d+) KB/.exec(run.stderr) ?? [];
  console.log(`${what}: refused in ${seconds} s, peak RSS ${rss} KB`);
  expect(Number(seconds)).toBeLessThan(MAX_SECONDS);
  expect(Number(rss)).toBeLessThan(MAX_RSS_KB);
  expect(digestFile(loop.backing)).toBe(before);
}
