import { execFileSync, spawnSync } from 'node:child_process';
import { closeSync, openSync, readFileSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FatEditor, type NewFile } from '../../../user/customise/fat.js';
import { scratchDir, writeRandomFile } from '../../support/loop-device.js';
import { fileReader } from '../../support/customisation.js';
import { freeBytes } from '../../support/os-image.js';

/** A FAT volume file made by mkfs.fat, with `files` copied in by mtools. */
function volume(dir: string, size: number, mkfs: string[], files: [string, string | number][] = []): string {
  const path = join(dir, `vol-${Math.random().toString(36).slice(2)}.img`);
  execFileSync('truncate', ['-s', String(size), path]);
  execFileSync('mkfs.fat', [...mkfs, path], { stdio: 'ignore' });
  for (const [name, content] of files) {
    const source = join(dir, `src-${Math.random().toString(36).slice(2)}`);
    if (typeof content === 'number') writeRandomFile(source, content);
    else writeFileSync(source, content);
    execFileSync('mcopy', ['-i', path, source, `::/${name}`]);
  }
  return path;
}

/** Plans `files` into the volume and writes the planned bytes into it, as the helper would onto a card. */
async function customise(path: string, files: NewFile[], last: string | null = null): Promise<void> {
  const fat = await FatEditor.open(fileReader(path), 0, readFileSync(path).length);
  if (fat === null) throw new Error('not FAT');
  fat.writeFiles(files, last);
  const fd = openSync(path, 'r+');
  try {
    for (const w of fat.writes()) writeSync(fd, w.bytes, 0, w.bytes.length, w.offset);
  } finally {
    closeSync(fd);
  }
}

function fsck(path: string): string {
  const run = spawnSync('fsck.fat', ['-n', '-v', path], { encoding: 'utf8' });
  return run.status === 0 ? '' : `${run.stdout}${run.stderr}`;
}

function mread(path: string, name: string): Buffer {
  return execFileSync('mtype', ['-i', path, `::/${name}`]);
}

const text = (name: string, body: string): NewFile => ({ name, bytes: Buffer.from(body) });

describe('FAT: files planned into the root directory, written as the helper writes them', () => {
  const dir = scratchDir();
  const kinds: [string, number, string[]][] = [
    ['FAT12', 4 * 1024 * 1024, ['-F', '12']],
    ['FAT16', 32 * 1024 * 1024, ['-F', '16']],
    ['FAT32, 512-byte clusters', 40 * 1024 * 1024, ['-F', '32', '-s', '1']],
    ['FAT32, 4 KiB clusters', 300 * 1024 * 1024, ['-F', '32', '-s', '8']],
  ];

  it.each(kinds)(
    '%s: new files with long and short names, and a file replaced in place, pass fsck.fat and read back',
    async (_kind, size, mkfs) => {
      const path = volume(dir, size, mkfs, [
        ['kernel.img', 300_000],
        ['cmdline.txt', 'console=tty1 root=/dev/mmcblk0p2 rootwait\n'],
        ['config.txt', 'arm_64bit=1\n'],
      ]);
      const script = `#!/bin/bash\n${'echo configuring\n'.repeat(700)}`;
      await customise(
        path,
        [
          text('firstrun.sh', script),
          text('user-data', '#cloud-config\nhostname: ü\n'),
          text('rpi-preseed.toml', 'config_version = "1.0"\n'),
          text('cmdline.txt', 'console=tty1 root=/dev/mmcblk0p2 rootwait systemd.run=/boot/firstrun.sh\n'),
        ],
        'cmdline.txt',
      );
      expect(fsck(path)).toBe('');
      expect(mread(path, 'firstrun.sh').toString()).toBe(script);
      expect(mread(path, 'user-data').toString()).toBe('#cloud-config\nhostname: ü\n');
      expect(mread(path, 'rpi-preseed.toml').toString()).toBe('config_version = "1.0"\n');
      expect(mread(path, 'cmdline.txt').toString()).toBe(
        'console=tty1 root=/dev/mmcblk0p2 rootwait systemd.run=/boot/firstrun.sh\n',
      );
      expect(mread(path, 'config.txt').toString()).toBe('arm_64bit=1\n');
      const listing = execFileSync('mdir', ['-i', path, '-b', '::/']).toString();
      expect(listing).toMatch(/firstrun\.sh/);
      expect(listing).toMatch(/rpi-preseed\.toml/);
    },
  );

  it('a file that shrinks gives its clusters back, one that grows takes more; the same plan twice gives the same bytes', async () => {
    const path = volume(
      dir,
      4 * 1024 * 1024,
      ['-F', '12'],
      [
        ['big.txt', 'x'.repeat(10_000)],
        ['small.txt', 'y'],
      ],
    );
    const copy = join(dir, 'copy.img');
    writeFileSync(copy, readFileSync(path));
    const files = [text('big.txt', 'now small'), text('small.txt', 'z'.repeat(9000))];
    await customise(path, files);
    await customise(copy, files);
    expect(readFileSync(path).equals(readFileSync(copy))).toBe(true);
    expect(fsck(path)).toBe('');
    expect(mread(path, 'big.txt').toString()).toBe('now small');
    expect(mread(path, 'small.txt').toString()).toBe('z'.repeat(9000));
  });

  it('a FAT32 root directory with no free slot grows by a cluster, and its old end marker no longer hides the new entries', async () => {
    // 512-byte clusters hold 16 entries: the volume label, "a-long-file-name-N" (3 slots each) x 5 fill it.
    const path = volume(
      dir,
      40 * 1024 * 1024,
      ['-F', '32', '-s', '1', '-n', 'LABEL'],
      Array.from({ length: 5 }, (_, i): [string, string] => [`a-long-file-name-${i}`, `${i}`]),
    );
    await customise(path, [text('network-config', 'version: 2\n')]);
    expect(fsck(path)).toBe('');
    expect(mread(path, 'network-config').toString()).toBe('version: 2\n');
    expect(mread(path, 'a-long-file-name-4').toString()).toBe('4');
  });

  it('a volume too full for the files is refused before anything is planned, with what is needed and what is free', async () => {
    const path = volume(dir, 4 * 1024 * 1024, ['-F', '12']);
    const free = freeBytes(path);
    const filler = join(dir, 'filler');
    writeRandomFile(filler, free - 2048);
    execFileSync('mcopy', ['-i', path, filler, '::/filler.bin']);
    const before = readFileSync(path);
    await expect(customise(path, [text('firstrun.sh', 'x'.repeat(8000))])).rejects.toThrow(
      /too full for the customisation: firstrun\.sh need 8 KiB more and it has 2 KiB free\. Nothing was written\./,
    );
    expect(readFileSync(path).equals(before)).toBe(true);
  });

  it('a full fixed-size root directory (FAT12/16) is refused', async () => {
    // mkfs.fat rounds a FAT16 root directory up to 64 entries; FAT12's stays at 16.
    const path = volume(dir, 4 * 1024 * 1024, ['-F', '12', '-r', '16']);
    for (let i = 0; i < 16; i++) execFileSync('mcopy', ['-i', path, '/dev/null', `::/F${i}.TXT`]);
    await expect(customise(path, [text('NEW.TXT', 'x')])).rejects.toThrow(/root directory is full/);
  });

  it('what is not a FAT volume is not opened', async () => {
    const path = join(dir, 'random.img');
    writeRandomFile(path, 1024 * 1024);
    expect(await FatEditor.open(fileReader(path), 0, 1024 * 1024)).toBeNull();
  });
});
