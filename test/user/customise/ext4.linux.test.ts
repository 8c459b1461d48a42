import { execFileSync } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Ext4Reader } from '../../../user/customise/ext4.js';
import { scratchDir, writeRandomFile } from '../../support/loop-device.js';
import { fileReader } from '../../support/customisation.js';

describe('ext2/3/4 path lookups', () => {
  const dir = scratchDir();
  const tree = join(dir, 'tree');
  mkdirSync(join(tree, 'usr', 'lib', 'raspberrypi-sys-mods'), { recursive: true });
  mkdirSync(join(tree, 'etc', 'cloud'), { recursive: true });
  mkdirSync(join(tree, 'boot', 'firmware'), { recursive: true });
  writeFileSync(join(tree, 'usr', 'lib', 'raspberrypi-sys-mods', 'imager_custom'), '#!/bin/sh\n');
  symlinkSync('usr/lib', join(tree, 'lib'));
  // Enough entries for a hashed (htree) directory of many blocks.
  mkdirSync(join(tree, 'usr', 'share', 'many'), { recursive: true });
  for (let i = 0; i < 3000; i++) writeFileSync(join(tree, 'usr', 'share', 'many', `file-with-a-longer-name-${i}`), '');
  writeRandomFile(join(tree, 'blob'), 1024 * 1024);

  it.each([
    ['ext4', ['-t', 'ext4']],
    ['ext2 (block maps, no extents)', ['-t', 'ext2']],
    ['ext4 with 1 KiB blocks', ['-t', 'ext4', '-b', '1024']],
  ])('%s', async (_name, options) => {
    const image = join(dir, `fs-${Math.random().toString(36).slice(2)}.img`);
    execFileSync('truncate', ['-s', '64M', image]);
    execFileSync('mke2fs', ['-q', '-F', ...options, '-d', tree, image]);
    const fs = await Ext4Reader.open(fileReader(image), 0, 64 * 1024 * 1024);
    expect(fs).not.toBeNull();
    expect(await fs?.kind('/usr/lib/raspberrypi-sys-mods/imager_custom')).toBe('file');
    expect(await fs?.kind('/etc/cloud')).toBe('directory');
    expect(await fs?.kind('/boot/firmware')).toBe('directory');
    expect(await fs?.kind('/lib')).toBe('other');
    expect(await fs?.kind('/usr/share/many/file-with-a-longer-name-2999')).toBe('file');
    expect(await fs?.kind('/usr/share/many/file-with-a-longer-name-3000')).toBeNull();
    expect(await fs?.kind('/etc/cloud/cloud.cfg')).toBeNull();
    expect(await fs?.kind('/blob/inside')).toBeNull();
  });

  it('a partition without ext2/3/4, or one smaller than its filesystem says, is not opened', async () => {
    const image = join(dir, 'small.img');
    execFileSync('truncate', ['-s', '16M', image]);
    execFileSync('mke2fs', ['-q', '-F', '-t', 'ext4', image]);
    expect(await Ext4Reader.open(fileReader(image), 0, 8 * 1024 * 1024)).toBeNull();
    writeRandomFile(join(dir, 'random.img'), 4096);
    expect(await Ext4Reader.open(fileReader(join(dir, 'random.img')), 0, 4096)).toBeNull();
  });
});
