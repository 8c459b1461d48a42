import { readFile, stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { holdsSystem, type Drive } from '../../common/domain/drive.js';
import { runTool } from '../../node/run-tool.js';

/**
 * Loop devices, which drivelist 12 leaves out of its Linux listing, from the OS's own: lsblk
 * (util-linux ≥ 2.37 for MOUNTPOINTS). Without --all, lsblk lists only attached loops.
 */
const LSBLK_ARGS = ['--json', '--bytes', '--paths', '--output', 'NAME,TYPE,SIZE,RO,LOG-SEC,PHY-SEC,PTTYPE,MOUNTPOINTS'];

/** One device in `lsblk --json` output, with the columns asked for above. */
export interface LsblkDevice {
  name: string;
  type: string;
  size: number | null;
  ro: boolean;
  'log-sec': number | null;
  'phy-sec': number | null;
  pttype: string | null;
  mountpoints: (string | null)[] | null;
  children?: LsblkDevice[];
}

function mountpointsOf(device: LsblkDevice): string[] {
  const own = (device.mountpoints ?? []).filter((m): m is string => m !== null);
  return [...own, ...(device.children ?? []).flatMap(mountpointsOf)];
}

/** The loop devices in lsblk's output as drives; `backingFiles` names the file behind each (by device path) for its description. */
export function loopDrives(lsblk: { blockdevices: LsblkDevice[] }, backingFiles: ReadonlyMap<string, string>): Drive[] {
  return lsblk.blockdevices
    .filter((d) => d.type === 'loop' && (d.size ?? 0) > 0)
    .map((d): Drive => {
      const mountpoints = mountpointsOf(d);
      const logicalBlockSize = d['log-sec'] ?? 512;
      const backing = backingFiles.get(d.name);
      return {
        device: d.name,
        raw: d.name,
        description: backing === undefined ? 'Loop device' : `Loop device (${basename(backing)})`,
        size: d.size,
        logicalBlockSize,
        physicalBlockSize: d['phy-sec'] ?? logicalBlockSize,
        bus: 'virtual',
        removable: false,
        readOnly: d.ro,
        virtual: true,
        // A live system runs from a loop device (its squashfs); that one is the running system.
        system: holdsSystem(mountpoints) ? 'running' : null,
        mountpoints,
        partitionTable: d.pttype === 'gpt' ? 'gpt' : d.pttype === 'dos' ? 'mbr' : null,
        // Read by listDrives, which knows every drive's device name.
        medium: null,
      };
    });
}

function isBlockDevice(path: string): Promise<boolean> {
  return stat(path).then(
    (s) => s.isBlockDevice(),
    () => false,
  );
}

/** The attached loop devices of this machine, or only `device` (a loop's path) and none if it is no attached loop. */
export async function listLoopDrives(device?: string): Promise<Drive[]> {
  const args = device === undefined ? LSBLK_ARGS : [...LSBLK_ARGS, device];
  const output = await runTool('lsblk', args).catch(async (error: unknown) => {
    // lsblk fails for a name that is no block device: there is no such drive, which is no error here.
    if (device !== undefined && !(await isBlockDevice(device))) return '{"blockdevices":[]}';
    throw error;
  });
  const listing = JSON.parse(output) as { blockdevices: LsblkDevice[] };
  const backing = new Map<string, string>();
  for (const d of listing.blockdevices) {
    if (d.type !== 'loop') continue;
    const file = await readFile(`/sys/block/${basename(d.name)}/loop/backing_file`, 'utf8').catch(() => null);
    if (file !== null) backing.set(d.name, file.trim());
  }
  return loopDrives(listing, backing);
}
