/**
 * findDrive looks a loop device up among the loops alone (drivelist never lists one): it must give
 * what the full listing gives for the same name, and nothing for a loop name that is no drive.
 */
import { readdirSync } from 'node:fs';
import { expect, it } from 'vitest';
import { MiB } from '../../../common/domain/units.js';
import { findDrive, listDrives } from '../../../user/drives/list-drives.js';
import { describeDevices } from '../../support/device-suite.js';
import { createLoop, mountDevice } from '../../support/loop-device.js';
import { mkfsExt4 } from '../../support/partitions.js';

describeDevices('findDrive', () => {
  it('finds a loop device as the full listing has it, mountpoints included', async () => {
    const loop = createLoop({ size: 64 * MiB, fill: 'sparse' });
    mkfsExt4(loop.path, 'FINDME');
    const dir = mountDevice(loop.path);
    const found = await findDrive(loop.path);
    const listed = (await listDrives({ showAll: true, showVirtual: true })).find((d) => d.device === loop.path);
    expect(found).toBeDefined();
    expect(found?.mountpoints).toEqual([dir]);
    expect(found).toEqual(listed);
  });

  it('finds nothing under a loop name with no device node', async () => {
    const numbers = new Set(readdirSync('/dev').flatMap((name) => /^loop(\d+)$/.exec(name)?.[1] ?? []).map(Number));
    let free = 0;
    while (numbers.has(free)) free++;
    expect(await findDrive(`/dev/loop${free}`)).toBeUndefined();
  });
});
