import type { Drive } from '../../common/domain/drive.js';
import { formatBytes } from '../../common/domain/units.js';
import type { DriveVisibility } from '../../common/domain/verdict.js';
import { listDrives } from '../../user/drives/list-drives.js';
import { EXIT } from '../exit-codes.js';

function flagsOf(d: Drive): string {
  const flags = [
    d.system === 'running' ? 'SYSTEM' : d.system === 'internal' ? 'internal' : '',
    d.removable ? 'removable' : '',
    d.virtual ? 'virtual' : '',
    d.readOnly ? 'read-only' : '',
  ];
  return flags.filter(Boolean).join(',') || '-';
}

/**
 * `sluice list [--all] [--virtual] [--json]`: the drives Sluice would offer, as the app shows them:
 * cards and sticks by default; --all adds this computer's own disks (SYSTEM: holds the running
 * system, never written; internal: written only after typing its name) and virtual drives;
 * --virtual adds loop devices, RAM disks and disk images.
 */
export async function listCommand(visibility: DriveVisibility, json: boolean): Promise<number> {
  const drives = await listDrives(visibility);
  if (json) {
    process.stdout.write(`${JSON.stringify(drives, null, 2)}\n`);
    return EXIT.ok;
  }
  if (drives.length === 0) {
    const more = visibility.showAll ? '' : ' (--all also lists this computer’s own disks and virtual drives)';
    process.stdout.write(`No drives found${more}.\n`);
    return EXIT.ok;
  }
  const rows = drives.map((d) => [
    d.device,
    d.size === null ? 'no medium' : formatBytes(d.size),
    d.bus,
    d.description || '-',
    flagsOf(d),
    d.mountpoints.join(',') || '-',
  ]);
  const header = ['DEVICE', 'SIZE', 'BUS', 'DESCRIPTION', 'FLAGS', 'MOUNTED'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  for (const row of [header, ...rows])
    process.stdout.write(
      `${row
        .map((cell, i) => cell.padEnd(widths[i] ?? 0))
        .join('  ')
        .trimEnd()}\n`,
    );
  return EXIT.ok;
}
