/**
 * What the helper says of a drive name that is not a disk's own (the names themselves come from
 * each platform's canonicalName: platform-seams.test.ts, and the device tests of the launcher).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { refuseDriveName } from '../../writer/drive-name.js';
import { linuxPlatform } from '../../writer/platform/linux.js';
import type { DevicePlatform } from '../../writer/platform/types.js';

/** The Linux seam, naming `path` as `names` says. */
function naming(names: Record<string, string | null>): DevicePlatform {
  return { ...linuxPlatform, canonicalName: (path) => Promise.resolve(names[path] ?? null) };
}

describe('the helper’s look at a drive name', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-test-names-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('takes a disk’s own name', async () => {
    expect(await refuseDriveName('/dev/sdb', naming({ '/dev/sdb': '/dev/sdb' }))).toBeNull();
  });

  it('refuses another name for a disk, naming the disk', async () => {
    expect(
      await refuseDriveName('/dev/disk/by-id/usb-card', naming({ '/dev/disk/by-id/usb-card': '/dev/sdb' })),
    ).toEqual({
      code: 'target-not-block-device',
      message:
        '/dev/disk/by-id/usb-card is another name for /dev/sdb. Name the drive itself (/dev/sdb), so that the drive you authorized is the one that is opened.',
    });
  });

  it('refuses a name that leads to no disk: gone, or something else', async () => {
    const file = join(dir, 'file.img');
    writeFileSync(file, 'x');
    expect(await refuseDriveName(join(dir, 'gone'), naming({}))).toMatchObject({
      code: 'target-not-found',
      message: expect.stringContaining('does not exist'),
    });
    expect(await refuseDriveName(file, naming({}))).toMatchObject({
      code: 'target-not-block-device',
      message: expect.stringContaining('is not a disk'),
    });
  });
});
