/**
 * The main process's part in the verdicts: which image facts it judges with, and how a start
 * request for a drive is refused. The rules themselves are common/domain/verdict.ts, tested in
 * test/common/domain/verdicts.test.ts; the drives here are drivelist's captured output from Linux and
 * Windows (test/fixtures/drivelist), since this machine has no internal disk but its running one.
 */
import { describe, expect, it } from 'vitest';
import { judgeDrives, targetRefusal } from '../../../electron/core/drive-view.js';
import type { ProbedImage } from '../../../electron/core/image-probe.js';
import { linuxDrives as linux, win32Drives as windows } from '../../support/drive-fixtures.js';
import { rawImageInfo } from '../../support/image-fixtures.js';

function image(realPath: string, size: number | null, sizeExact = size !== null): ProbedImage {
  return {
    info: rawImageInfo(realPath, 0, { size, sizeExact }),
    local: { realPath },
    source: { kind: 'image' },
  } as ProbedImage;
}

function kinds(drives: ReturnType<typeof judgeDrives>, device: string): string[] | undefined {
  return drives.find((d) => d.device === device)?.verdicts.map((v) => v.kind);
}

function judged(drives: ReturnType<typeof judgeDrives>, device: string) {
  const drive = drives.find((d) => d.device === device);
  if (drive === undefined) throw new Error(`${device} is not in the fixture`);
  return drive;
}

describe('the drives the picker gets', () => {
  it('keep everything the scanner knows, and add the verdicts', () => {
    const scanned = linux.find((d) => d.device === '/dev/vda');
    const [vda] = judgeDrives(
      linux.filter((d) => d === scanned),
      null,
    );
    expect(vda).toEqual({
      ...scanned,
      verdicts: [
        expect.objectContaining({ kind: 'system', running: true }),
        expect.objectContaining({ kind: 'large' }),
      ],
    });
  });

  it('find the image’s own drive among all of them, the hidden system disk included', () => {
    const fromHome = judgeDrives(linux, image('/home/me/raspios.img', 1e9));
    expect(kinds(fromHome, '/dev/vda')).toEqual(['system', 'source', 'large']);
    expect(kinds(fromHome, '/dev/sdb')).toEqual(['mounted']);

    const fromCard = judgeDrives(linux, image('/media/pi/bootfs/raspios.img', 1e9));
    expect(kinds(fromCard, '/dev/sdb')).toEqual(['source', 'mounted']);
  });

  it('say nothing about size without an image, or while its decoded size is unknown', () => {
    for (const chosen of [null, image('/home/me/os.img.xz', null)]) {
      expect(judgeDrives(linux, chosen).flatMap((d) => d.verdicts.map((v) => v.kind))).not.toContain('too-small');
    }
    expect(kinds(judgeDrives(linux, image('/home/me/big.img', 64e9)), '/dev/sdb')).toEqual(['too-small', 'mounted']);
  });

  it('judge with gzip’s size hint as the least the drive must hold', () => {
    const sdb = judged(judgeDrives(linux, image('/home/me/big.img.gz', 64e9, false)), '/dev/sdb');
    expect(sdb.verdicts[0]).toMatchObject({
      kind: 'too-small',
      message: expect.stringContaining('the image needs at least 64.0 GB') as unknown,
    });
    expect(targetRefusal(sdb, false)?.code).toBe('target-too-small');
  });
});

describe('a start request for a drive', () => {
  it('is refused in the helper’s and the CLI’s words when the rules refuse the drive', () => {
    const drives = judgeDrives(linux, image('/media/pi/bootfs/raspios.img', 64e9));
    expect(targetRefusal(judged(drives, '/dev/sdb'), false)).toEqual({
      code: 'target-is-source',
      message: expect.stringContaining('The image file is stored on /dev/sdb') as unknown,
    });
    expect(targetRefusal(judged(judgeDrives(linux, image('/home/me/big.img', 64e9)), '/dev/sdb'), false)?.code).toBe(
      'target-too-small',
    );
  });

  it('is refused for the running system, whatever name was typed', () => {
    expect(targetRefusal(judged(judgeDrives(linux, null), '/dev/vda'), true)).toMatchObject({
      code: 'target-system',
      message: expect.stringContaining('holds the running system') as unknown,
    });
    expect(targetRefusal(judged(judgeDrives(windows, null), '\\\\.\\PhysicalDrive0'), true)?.code).toBe(
      'target-system',
    );
  });

  it('needs an internal disk’s name typed, and then lets it through', () => {
    const internal = judged(judgeDrives(windows, image('C:\\Users\\me\\os.img', 1e9)), '\\\\.\\PhysicalDrive5');
    expect(targetRefusal(internal, false)).toEqual({
      code: 'target-system',
      message: expect.stringContaining('internal disk of this computer') as unknown,
    });
    expect(targetRefusal(internal, true)).toBeNull();
  });

  it('lets a card through, mounted or not: the helper unmounts it first', () => {
    const drives = judgeDrives(windows, image('C:\\Users\\me\\os.img', 1e9));
    expect(targetRefusal(judged(drives, '\\\\.\\PhysicalDrive1'), false)).toBeNull();
    expect(targetRefusal(judged(drives, '\\\\.\\PhysicalDrive4'), false)).toBeNull();
  });
});
