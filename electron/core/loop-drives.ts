import { readdir, readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { currentPlatform } from '../../worker/engine/platform/index.js';
import type { ScannedDrive } from './scanned-drive.js';

/**
 * Attached Linux loop devices, as virtual drives. drivelist leaves them out; they are how a disk
 * image is attached as a drive, and how this project's tests stand in for SD cards. The facts come
 * from the engine's own device inspection, the same look it takes before writing.
 */
export async function listLoopDrives(): Promise<ScannedDrive[]> {
  if (process.platform !== 'linux') return [];
  const names = (await readdir('/sys/block').catch(() => [] as string[])).filter((name) => /^loop\d+$/.test(name));
  const drives: ScannedDrive[] = [];
  for (const name of names) {
    // An unattached loop node has no backing file; it is not a drive.
    const backing = await readFile(`/sys/block/${name}/loop/backing_file`, 'utf8').then((text) => text.trim(), () => null);
    if (backing === null) continue;
    const facts = await currentPlatform().inspect(`/dev/${name}`);
    if (!facts.exists || !facts.isBlockDevice || facts.size === 0) continue;
    drives.push({
      device: facts.path,
      description: `Loop device (${basename(backing)})`,
      size: facts.size,
      bus: 'loop',
      removable: false,
      virtual: true,
      readOnly: facts.readOnly,
      system: facts.isSystem,
      mountpoints: facts.mountpoints,
    });
  }
  return drives;
}
