import type drivelist from 'drivelist';
import { SYSTEM_MOUNTPOINTS, type Drive, type DriveBus } from '../../common/domain/drive.js';

/** drivelist's bus names (lsblk TRAN upper-cased, DiskArbitration protocols, Windows STORAGE_BUS_TYPE) by Sluice bus. */
const BUS_NAMES: Record<Exclude<DriveBus, 'other'>, readonly string[]> = {
  virtual: ['VIRTUAL', 'FILEBACKEDVIRTUAL', 'VIRTUAL INTERFACE', 'DISK IMAGE'],
  sd: ['SD', 'MMC', 'SECURE DIGITAL'],
  usb: ['USB'],
  sata: ['SATA', 'ATA', 'ATAPI', 'IDE'],
  scsi: ['SCSI', 'SAS', 'ISCSI', 'RAID', 'FIBRE', 'SSA'],
  pcie: ['NVME', 'PCI-EXPRESS', 'PCI', 'APPLE FABRIC'],
};

function busOf(d: drivelist.Drive): DriveBus {
  if (d.isVirtual === true) return 'virtual';
  // lsblk names no transport for a board's own SD slot; its devices are mmcblkN.
  if (d.isCard === true || d.device.startsWith('/dev/mmcblk')) return 'sd';
  const name = d.busType.toUpperCase();
  for (const [bus, names] of Object.entries(BUS_NAMES) as [DriveBus, readonly string[]][]) {
    if (names.includes(name)) return bus;
  }
  return d.isUSB === true ? 'usb' : 'other';
}

/**
 * The mountpoints that mean "this disk runs the system" on `platform`: the POSIX set, and on
 * Windows the system drive (%SystemDrive%, "C:\"), since / does not exist there.
 */
export function runningSystemMountpoints(platform: NodeJS.Platform, env: NodeJS.ProcessEnv): ReadonlySet<string> {
  if (platform !== 'win32') return SYSTEM_MOUNTPOINTS;
  return new Set([`${(env['SystemDrive'] ?? 'C:').toUpperCase()}\\`]);
}

/** One drive as drivelist reports it, in Sluice's model. */
function driveFromDrivelist(d: drivelist.Drive, runningSystem: ReadonlySet<string>): Drive {
  const mountpoints = d.mountpoints.map((m) => m.path);
  const bus = busOf(d);
  const logicalBlockSize = d.logicalBlockSize > 0 ? d.logicalBlockSize : 512;
  // Windows drive letters come in either case.
  const running = mountpoints.some((m) => runningSystem.has(m) || runningSystem.has(m.toUpperCase()));
  return {
    device: d.device,
    raw: d.raw,
    description: d.description.trim(),
    size: d.size !== null && d.size > 0 ? d.size : null,
    logicalBlockSize,
    physicalBlockSize: d.blockSize > 0 ? d.blockSize : logicalBlockSize,
    bus,
    removable: d.isRemovable,
    readOnly: d.isReadOnly,
    virtual: bus === 'virtual',
    system: running ? 'running' : d.isSystem ? 'internal' : null,
    mountpoints,
    partitionTable: d.partitionTableType,
    // Read by listDrives, which knows every drive's device name.
    medium: null,
  };
}

/**
 * drivelist's listing in Sluice's model. An entry drivelist could not read fully (its `error` is
 * set; on Windows, a device it could not open) is left out: its verdicts would rest on missing facts.
 */
export function drivesFromDrivelist(list: readonly drivelist.Drive[], runningSystem: ReadonlySet<string>): Drive[] {
  // drivelist types `error` as null, but its native listers set a message there.
  return list.filter((d) => !(d.error as string | null)).map((d) => driveFromDrivelist(d, runningSystem));
}
