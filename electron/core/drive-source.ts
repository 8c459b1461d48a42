import { listSystemDrives, type SystemDrive } from '../../worker/drives/list-drives.js';
import { listLoopDrives } from './loop-drives.js';
import type { ScannedDrive } from './scanned-drive.js';

export interface ScanOptions {
  /** Include virtual drives (loop devices, attached disk images): the showVirtual setting. */
  includeVirtual: boolean;
}

/** One look at the drives attached now. */
export type ScanDrives = (options: ScanOptions) => Promise<ScannedDrive[]>;

function fromSystemDrive(drive: SystemDrive): ScannedDrive {
  const bus = drive.isCard ? 'SD' : drive.busType === 'UNKNOWN' ? null : drive.busType;
  return {
    device: drive.device,
    description: drive.description.trim(),
    size: drive.size,
    bus,
    removable: drive.isRemovable,
    virtual: drive.isVirtual === true,
    readOnly: drive.isReadOnly,
    system: drive.isSystem,
    mountpoints: drive.mountpoints.map((m) => m.path),
  };
}

/**
 * The interim drive source: drivelist, plus loop devices when virtual drives are shown. The drives
 * scanner (issue 4) replaces this function; drive-watcher.ts polls it until then.
 */
export async function scanDrives(options: ScanOptions): Promise<ScannedDrive[]> {
  const system = (await listSystemDrives()).map(fromSystemDrive);
  const loops = options.includeVirtual ? await listLoopDrives() : [];
  const listed = new Set(system.map((d) => d.device));
  return [...system, ...loops.filter((d) => !listed.has(d.device))].filter((d) => options.includeVirtual || !d.virtual);
}
