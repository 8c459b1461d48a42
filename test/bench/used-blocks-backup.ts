/**
 * Section "backup" of `npm run bench`: a 4 GiB drive holding the 1 GiB OS-like image, its root
 * grown to the drive's end as after a first boot, backed up by Sluice reading only the used
 * blocks, by Sluice reading every block (--all-blocks, the reference), and by `dd` alone and into
 * `zstd` and `xz`. For each: the time, the bytes read from the drive (its sysfs
 * stat), and the file's size on disk. The drive and the files are on the fixtures' disk.
 */
import { rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { GiB } from '../../common/domain/units.js';
import { CLI } from '../support/cli.js';
import { grownDrive } from '../support/grown-drive.js';
import { assertOwnedLoop, bytesReadFrom, scratchDir } from '../support/loop-device.js';
import { mediansInTurns, measure, type Measurement } from './measure.js';
import { osLikeImage } from './os-like-image.js';
import { headline } from './headlines.js';

const NODE = process.execPath;
const DRIVE_BYTES = 4 * GiB;
/** The acceptance bound: the used-blocks backup's time over the whole backup's, in the same run. */
const TIME_BOUND = 0.35;

interface Run {
  m: Measurement;
  read: number;
  onDisk: number;
}

/** One run of `script` writing `out`: its measurement, the drive's bytes read, the file's size on disk. */
async function runOnce(script: string, drive: string, out: string, sizes: Map<string, Run>): Promise<Measurement> {
  rmSync(out, { force: true });
  rmSync(`${out}.bmap`, { force: true });
  const before = bytesReadFrom(drive);
  const m = await measure(script);
  sizes.set(script, { m, read: bytesReadFrom(drive) - before, onDisk: statSync(out).blocks * 512 });
  rmSync(out, { force: true });
  return m;
}

export async function usedBlocksBackupSection(fixtures: string, runs: number): Promise<string> {
  const dir = scratchDir(fixtures);
  const drive = grownDrive(osLikeImage(fixtures), DRIVE_BYTES, dir);
  assertOwnedLoop(drive.path);
  const out = join(dir, 'backup.out');
  const rows: [string, string][] = [
    [
      '**sluice backup --all-blocks** (every block, read back)',
      `${NODE} ${CLI} backup --yes --all-blocks ${drive.path} ${out}`,
    ],
    ['**sluice backup** (used blocks, read back)', `${NODE} ${CLI} backup --yes ${drive.path} ${out}`],
    [
      '**sluice backup --compress zstd** (used blocks, read back)',
      `${NODE} ${CLI} backup --yes --compress zstd ${drive.path} ${out}`,
    ],
    ['`dd iflag=direct` (no check)', `dd if=${drive.path} of=${out} bs=4M iflag=direct status=none`],
    [
      '`dd iflag=direct \\| zstd -T0 -3` (no check)',
      `dd if=${drive.path} bs=4M iflag=direct status=none | zstd -q -T0 -3 > ${out}`,
    ],
    [
      '`dd iflag=direct \\| xz -T2 -1` (no check)',
      `dd if=${drive.path} bs=4M iflag=direct status=none | xz -T2 -1 > ${out}`,
    ],
  ];
  const last = new Map<string, Run>();
  const medians = await mediansInTurns(
    runs,
    rows.map(
      ([, script]) =>
        () =>
          runOnce(script, drive.path, out, last),
    ),
  );
  const full = medians[0]?.wallSeconds ?? 1;
  const lines = [
    `### Backup of a 4 GiB drive holding the 1 GiB OS-like image, root grown to the end (loop on the fixtures' disk, median of ${runs})`,
    '',
    '| run | wall s | × whole backup | read from drive MB | file on disk MB | peak RSS MB | CPU s |',
    '|---|---:|---:|---:|---:|---:|---:|',
  ];
  for (const [i, [name, script]] of rows.entries()) {
    const m = medians[i] as Measurement;
    const run = last.get(script);
    lines.push(
      `| ${name} | ${m.wallSeconds.toFixed(2)} | ${(m.wallSeconds / full).toFixed(2)} | ${((run?.read ?? 0) / 1e6).toFixed(0)} | ${((run?.onDisk ?? 0) / 1e6).toFixed(0)} | ${(m.peakRssBytes / 1e6).toFixed(0)} | ${m.cpuSeconds.toFixed(2)} |`,
    );
  }
  const ratio = (medians[1]?.wallSeconds ?? 0) / full;
  const seconds = (i: number) => medians[i]?.wallSeconds ?? Number.NaN;
  lines.push(
    '',
    headline(
      `back up a 4 GiB card holding a 1 GiB OS image`,
      '`dd iflag=direct` (reads it all, no check)',
      seconds(3),
      seconds(1),
    ),
    headline('the same into a `.zst`', '`dd iflag=direct | zstd -T0 -3` (no check)', seconds(4), seconds(2)),
    `acceptance (issue 33): used-blocks backup ≤ ${TIME_BOUND} × the whole backup's time — ${ratio.toFixed(2)}×, ${ratio <= TIME_BOUND ? 'met' : 'not met'}.`,
  );
  return lines.join('\n');
}
