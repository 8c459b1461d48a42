/**
 * findDrive and listDrivesFor look loop devices up among the loops alone (drivelist never lists
 * one): they must give what the full listing gives for the same names, and nothing for a loop name
 * that is no drive; a list that names any other drive gets the full listing.
 */
import { readdirSync } from 'node:fs';
import { expect, it } from 'vitest';
import { MiB } from '../../../common/domain/units.js';
import { findDrive, listDrives, listDrivesFor } from '../../../user/drives/list-drives.js';
import { describeDevices } from '../../support/device-suite.js';
import { createLoop, mountDevice } from '../../support/loop-device.js';
import { mkfsExt4 } from '../../support/partitions.js';

describeDevices('findDrive and listDrivesFor', () => {
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
    const numbers = new Set(
      readdirSync('/dev')
        .flatMap((name) => /^loop(\d+)$/.exec(name)?.[1] ?? [])
        .map(Number),
    );
    let free = 0;
    while (numbers.has(free)) free++;
    expect(await findDrive(`/dev/loop${free}`)).toBeUndefined();
  });

  it('lists loops alone for loop targets, as the full listing has them; the full listing when a target is not a loop', async () => {
    const loops = [createLoop({ size: 16 * MiB, fill: 'sparse' }), createLoop({ size: 16 * MiB, fill: 'sparse' })];
    const full = await listDrives({ showAll: true, showVirtual: true });
    const forLoops = await listDrivesFor(loops.map((l) => l.path));
    expect(forLoops.every((d) => d.device.startsWith('/dev/loop'))).toBe(true);
    for (const loop of loops)
      expect(forLoops.find((d) => d.device === loop.path)).toEqual(full.find((d) => d.device === loop.path));
    // This machine's own disk is listed by drivelist only: it is there once a target is no loop.
    const disk = full.find((d) => !d.device.startsWith('/dev/loop'));
    expect(disk).toBeDefined();
    const mixed = await listDrivesFor([loops[0]!.path, disk!.device]);
    // Compared by the drives this test knows: other tests attach and detach loops meanwhile.
    expect(mixed.find((d) => d.device === disk!.device)).toEqual(disk);
    expect(mixed.find((d) => d.device === loops[0]!.path)).toEqual(full.find((d) => d.device === loops[0]!.path));
  });
});
