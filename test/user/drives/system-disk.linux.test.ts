/**
 * This machine's own disk, classified by the listing and the verdicts the app and the CLI use.
 * Only listing and judging run here: nothing that could open the disk for writing.
 */
import { describe, expect, it } from 'vitest';
import { judgeDrive, refusalFailure, refusalOf, isDriveShown } from '../../../common/domain/verdict.js';
import { MiB } from '../../../common/domain/units.js';
import { listDrives } from '../../../user/drives/list-drives.js';
import { collect, spawnCli } from '../../support/cli.js';
import { rootDisk } from '../../support/system-disk.js';

describe('the system disk', () => {
  it('is listed as the running system, hidden by default, and refused in the helper’s words', async () => {
    const disk = rootDisk();
    const drives = await listDrives({ showAll: true, showVirtual: false });
    const drive = drives.find((d) => d.device === disk);
    expect(drive).toMatchObject({ system: 'running', virtual: false });
    if (drive === undefined) return;
    expect(isDriveShown(drive, { showAll: false, showVirtual: true })).toBe(false);
    const refusal = refusalOf(judgeDrive(drive, { size: 1 * MiB, storedOn: null }));
    expect(refusal).toMatchObject({ kind: 'system', running: true });
    expect(refusal && refusalFailure(refusal)).toMatchObject({
      code: 'target-system',
      message: expect.stringContaining('holds the running system') as unknown,
    });
    expect((await listDrives({ showAll: false, showVirtual: true })).map((d) => d.device)).not.toContain(disk);
  });

  it('is marked SYSTEM by `sluice list --all` and left out of `sluice list`', async () => {
    const disk = rootDisk();
    const all = await collect(spawnCli(['list', '--all']));
    expect(all.stdout.split('\n').find((line) => line.startsWith(`${disk} `))).toMatch(/\bSYSTEM\b/);
    expect((await collect(spawnCli(['list']))).stdout).not.toContain(disk);
  });
});
