/**
 * The rule, end to end (issue 16's acceptance): an OS-like image flashed onto a drive full of
 * random bytes, in every format, leaves out only filesystem free space, and the card it makes is
 * as good as the image: every partition passes fsck, both partitions hold the same tree as the
 * image's (ext4 mounted read-only, FAT read with mtools since this kernel cannot mount vfat), and
 * every byte outside the free space (as dumpe2fs and the FAT list it, not Sluice) equals the image.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import type { Extent } from '../../../../common/domain/extents.js';
import { MiB } from '../../../../common/domain/units.js';
import { flashCli, resultsOf } from '../../../support/cli.js';
import { describeDevices } from '../../../support/device-suite.js';
import { differencesOutside, imageFreeSpace } from '../../../support/free-space.js';
import { createLoop, readBytes, scratchDir, type LoopDevice } from '../../../support/loop-device.js';
import { osImage, osImageLayout, sh, type OsImageOptions } from '../../../support/os-image.js';
import { writeDmg } from '../../../support/udif.js';

const SIZE = 96 * MiB;

interface Variant {
  title: string;
  options: OsImageOptions;
  formats: readonly Format[];
}
type Format = 'raw' | 'xz' | 'zst' | 'zip' | 'qcow2' | 'dmg';
const ALL: readonly Format[] = ['raw', 'xz', 'zst', 'zip', 'qcow2', 'dmg'];

const VARIANTS: Variant[] = [
  { title: 'GPT, FAT32 boot, ext4 root', options: { fat32: true }, formats: ALL },
  { title: 'MBR, FAT32 boot, ext4 root', options: { table: 'mbr', fat32: true }, formats: ALL },
  {
    title: 'GPT, ext4 made with -O ^flex_bg',
    options: { fat32: true, ext4: ['-O', '^flex_bg', '-E', 'lazy_itable_init=0,lazy_journal_init=0'] },
    formats: ['raw', 'xz'],
  },
  {
    title: 'GPT, ext4 made with lazy_itable_init=1',
    options: { fat32: true, ext4: ['-E', 'lazy_itable_init=1'] },
    formats: ['raw', 'zst'],
  },
  {
    title: 'MBR, FAT12 boot and a raw firmware partition nothing reads',
    options: { table: 'mbr', rawPartition: 8 * MiB },
    formats: ['raw', 'xz'],
  },
];

/** Makes `name`.`format` from the raw image `name` in `dir`; returns its path. */
function encode(dir: string, name: string, format: Format): string {
  const out = `${name}.${format}`;
  switch (format) {
    case 'raw':
      return join(dir, name);
    case 'xz':
      sh(dir, `xz -T2 --block-size=4MiB -c ${name} > ${out}`);
      break;
    case 'zst':
      sh(dir, `zstd -q -c ${name} > ${out}`);
      break;
    case 'zip':
      sh(dir, `zip -q ${out} ${name}`);
      break;
    case 'qcow2':
      sh(dir, `qemu-img convert -c -f raw -O qcow2 ${name} ${out}`);
      break;
    case 'dmg':
      writeDmg(readFileSync(join(dir, name)), join(dir, out));
      break;
  }
  return join(dir, out);
}

/** `length` bytes at `offset` of `file`, as a file of their own. */
function slice(file: string, [offset, length]: [number, number], out: string): string {
  execFileSync('dd', [
    `if=${file}`,
    `of=${out}`,
    'bs=1M',
    `skip=${offset}`,
    `count=${length}`,
    'iflag=skip_bytes,count_bytes',
    'status=none',
  ]);
  return out;
}

/** Every file of a tree with its contents' digest, and its directories: what diff -r compares. */
function listing(root: string): string {
  return execFileSync(
    'sh',
    ['-c', `cd ${root} && find . -type d | sort && find . -type f -print0 | sort -z | xargs -0 sha256sum`],
    { encoding: 'utf8' },
  );
}

/**
 * Checks both partitions of `disk` (the image, or the device's backing file) with fsck, and
 * copies their trees out into `into`/boot and `into`/root: the root mounted read-only, the FAT
 * boot through mtools.
 */
function checkAndCopy(disk: string, options: OsImageOptions, into: string): void {
  const layout = osImageLayout(SIZE, options);
  const boot = slice(disk, layout.boot, join(into, 'boot.part'));
  const root = slice(disk, layout.root, join(into, 'root.part'));
  execFileSync('fsck.fat', ['-n', boot], { stdio: 'ignore' });
  execFileSync('e2fsck', ['-fn', root], { stdio: 'ignore' });
  mkdirSync(join(into, 'boot'));
  execFileSync('mcopy', ['-s', '-n', '-i', boot, '::/', join(into, 'boot')]);
  mkdirSync(join(into, 'mnt'));
  sh(into, 'mount -o ro,noload,loop root.part mnt && { cp -a mnt root; copied=$?; umount mnt; exit $copied; }');
}

describeDevices('free space left out in every format: fsck clean, identical trees, every other byte the image', () => {
  let dir: string;
  let loop: LoopDevice;

  beforeAll(() => {
    dir = scratchDir();
    loop = createLoop({ size: SIZE + 4 * MiB, dir });
  });

  VARIANTS.forEach((variant, v) => {
    const name = `os${v}.img`;
    let image: Buffer;
    let free: Extent[];
    let expected: { boot: string; root: string };

    it(`${variant.title}: the image itself passes the checks`, async () => {
      osImage(dir, SIZE, name, variant.options);
      image = readFileSync(join(dir, name));
      free = await imageFreeSpace(join(dir, name), dir);
      const from = join(dir, `${name}.trees`);
      mkdirSync(from);
      checkAndCopy(join(dir, name), variant.options, from);
      expected = { boot: listing(join(from, 'boot')), root: listing(join(from, 'root')) };
      expect(expected.boot).toMatch(/kernel\.img/);
      expect(expected.root).toMatch(/libblob\.so/);
    });

    for (const format of variant.formats) {
      it(`${variant.title}, ${format}: onto random bytes, only free space left out, and the card checks out`, async () => {
        const path = encode(dir, name, format);
        sh(dir, `dd if=/dev/urandom of=${loop.backing} bs=1M count=${SIZE / MiB} conv=notrunc status=none`);
        const run = await flashCli(path, [loop.path], ['--no-eject']);
        const result = resultsOf(run).get(loop.path);
        expect(result, run.stdout + run.stderr).toMatchObject({ status: 'ok', verified: true });
        // Most of each filesystem is free, and it was left out: both partitions are named.
        expect(Number(result?.skipped)).toBeGreaterThan(SIZE / 3);
        expect(Number(result?.bytes) + Number(result?.skipped)).toBe(SIZE);
        const reasons = run.events.find((e) => e.type === 'result')?.['skippedFor'] as {
          reason: { partition: number; filesystem: string };
        }[];
        expect(reasons.map((r) => r.reason.partition)).toEqual([1, 2]);

        const device = readBytes(loop.backing, 0, SIZE);
        expect(differencesOutside(device, image, free)).toEqual([]);
        // The card really holds the old random bytes in the free space: it was not written.
        expect(device.equals(image)).toBe(false);
        const to = join(dir, `${name}.${format}.device`);
        mkdirSync(to);
        checkAndCopy(loop.backing, variant.options, to);
        expect(listing(join(to, 'boot'))).toBe(expected.boot);
        expect(listing(join(to, 'root'))).toBe(expected.root);
        // Everything outside the two filesystems is the image's: the raw partition, the tables, the gaps.
        const layout = osImageLayout(SIZE, variant.options);
        if (layout.raw !== null)
          expect(
            device
              .subarray(layout.raw[0], layout.raw[0] + layout.raw[1])
              .equals(image.subarray(layout.raw[0], layout.raw[0] + layout.raw[1])),
          ).toBe(true);
        expect(device.subarray(0, layout.boot[0]).equals(image.subarray(0, layout.boot[0]))).toBe(true);
        expect(
          device.subarray(layout.root[0] + layout.root[1]).equals(image.subarray(layout.root[0] + layout.root[1])),
        ).toBe(true);
      });
    }
  });
});
