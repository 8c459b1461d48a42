import { formatBytes } from '../../common/units.js';
import { listSystemDrives } from '../../drives/list-drives.js';
import { EXIT } from '../exit-codes.js';

/** `sluice list [--json]`: the drives this machine has, with the flags that matter for safety. */
export async function listCommand(json: boolean): Promise<number> {
  const drives = await listSystemDrives();
  if (json) {
    process.stdout.write(`${JSON.stringify(drives, null, 2)}\n`);
    return EXIT.ok;
  }
  if (drives.length === 0) {
    process.stdout.write('No drives found.\n');
    return EXIT.ok;
  }
  const rows = drives.map((d) => {
    const flags = [d.isSystem ? 'SYSTEM' : '', d.isRemovable ? 'removable' : '', d.isVirtual ? 'virtual' : '', d.isReadOnly ? 'read-only' : ''].filter(Boolean).join(',');
    return [d.device, d.size === null ? '?' : formatBytes(d.size), d.description || '-', flags || '-', d.mountpoints.map((m) => m.path).join(',') || '-'];
  });
  const header = ['DEVICE', 'SIZE', 'DESCRIPTION', 'FLAGS', 'MOUNTED'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  for (const row of [header, ...rows]) process.stdout.write(`${row.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join('  ').trimEnd()}\n`);
  return EXIT.ok;
}
