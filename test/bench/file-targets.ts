/**
 * The file and whole-drive rows of `npm run bench` (section "files"): an image into a regular
 * file, a drive backed up into one, and a drive cloned onto another, each against the command a
 * careful user would type, checked as Sluice checks (read back from the disk, not the cache). Files are written on the
 * fixtures' filesystem (BENCH_FIXTURES, a real disk), drives are loop devices on /dev/shm.
 */
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { CLI } from '../support/cli.js';
import { assertOwnedLoop, createLoop, writeRandomFile } from '../support/loop-device.js';
import { headline } from './headlines.js';
import { medianOf, measure, type Measurement } from './measure.js';

const NODE = process.execPath;

interface Row {
  name: string;
  m: Measurement;
  reference?: Measurement;
}

function table(title: string, bytes: number, rows: Row[]): string {
  const lines = [
    `### ${title}`,
    '',
    '| run | wall s | MB/s | peak RSS MB | CPU s | speed vs reference |',
    '|---|---:|---:|---:|---:|---:|',
  ];
  for (const { name, m, reference } of rows) {
    const ratio = reference === undefined ? '' : `${(reference.wallSeconds / m.wallSeconds).toFixed(2)}×`;
    lines.push(
      `| ${name.replaceAll('|', '\\|')} | ${m.wallSeconds.toFixed(2)} | ${(bytes / m.wallSeconds / 1e6).toFixed(0)} | ${(m.peakRssBytes / 1e6).toFixed(0)} | ${m.cpuSeconds.toFixed(2)} | ${ratio} |`,
    );
  }
  return lines.join('\n');
}

/** Reads a file back the way Sluice verifies it: from the disk, not from the page cache. */
function readBack(file: string): string {
  return `dd if=${file} bs=4M iflag=direct status=none`;
}

/**
 * Runs each script `runs` times (the output file removed before each run) and returns the rows,
 * the first being the reference.
 */
async function rows(runs: number, out: string, entries: readonly [string, string][]): Promise<Row[]> {
  const result: Row[] = [];
  for (const [name, script] of entries) {
    const m = await medianOf(runs, () => {
      rmSync(out, { force: true });
      return measure(script);
    });
    result.push({ name, m, ...(result[0] !== undefined ? { reference: result[0].m } : {}) });
  }
  rmSync(out, { force: true });
  return result;
}

/** `bytes` of random data: the image, the drive to back up, the drive to clone. */
export async function fileSections(scratch: string, fixtures: string, runs: number, bytes: number): Promise<string[]> {
  const image = join(fixtures, `file-bench-${bytes}.img`);
  writeRandomFile(image, bytes);
  // Made afresh with the random image it compresses, and removed with it.
  const xz = `${image}.xz`;
  execFileSync('sh', ['-c', `xz -6 -T2 -c ${image} > ${xz}`]);
  const out = join(fixtures, 'file-bench-out.img');
  const mib = `${bytes / 2 ** 20} MiB`;
  const sections: string[] = [];
  try {
    sections.push(
      table(
        `Raw ${mib} image into a file on the fixtures' disk, copy + compare (median of ${runs})`,
        bytes,
        await rows(runs, out, [
          [
            '`cp` (copy_file_range) + O_DIRECT read-back `cmp`',
            `cp ${image} ${out} && sync ${out} && ${readBack(out)} | cmp - ${image}`,
          ],
          [
            '`dd bs=2M` (read/write loop) + O_DIRECT read-back `cmp`',
            `dd if=${image} of=${out} bs=2M conv=fsync status=none && ${readBack(out)} | cmp - ${image}`,
          ],
          ['**sluice flash IMAGE FILE** (kernel copy)', `${NODE} ${CLI} flash --yes ${image} ${out}`],
        ]),
      ),
      table(
        `xz ${mib} image decoded into a file, write + compare (median of ${runs})`,
        bytes,
        await rows(runs, out, [
          [
            '`xz -dc -T2 >` + O_DIRECT read-back `cmp`',
            `xz -dc -T2 ${xz} > ${out} && sync ${out} && ${readBack(out)} | cmp - ${image}`,
          ],
          ['**sluice flash IMAGE.xz FILE**', `${NODE} ${CLI} flash --yes ${xz} ${out}`],
        ]),
      ),
    );
    const drive = createLoop({ size: bytes, dir: scratch });
    const copy = createLoop({ size: bytes, dir: scratch, fill: 'allocated' });
    assertOwnedLoop(drive.path);
    assertOwnedLoop(copy.path);
    const clone = await rows(runs, out, [
      [
        '`dd iflag=direct oflag=direct` + `cmp`',
        `dd if=${drive.path} of=${copy.path} bs=4M iflag=direct oflag=direct conv=fsync status=none && dd if=${copy.path} bs=4M iflag=direct status=none | cmp - ${drive.path}`,
      ],
      ['**sluice clone**', `${NODE} ${CLI} clone --yes --no-eject ${drive.path} ${copy.path}`],
    ]);
    const [dd, ours] = clone.map((row) => row.m) as [Measurement, Measurement];
    sections.push(
      table(
        `Backup of a ${mib} drive (loop on /dev/shm) into a file, copy + check (median of ${runs})`,
        bytes,
        await rows(runs, out, [
          [
            '`dd iflag=direct` + O_DIRECT read-back `cmp`',
            `dd if=${drive.path} of=${out} bs=4M iflag=direct conv=fsync status=none && ${readBack(out)} | cmp - ${drive.path}`,
          ],
          ['**sluice backup**', `${NODE} ${CLI} backup --yes ${drive.path} ${out}`],
          [
            '`zstd -T0 -3` + uncached `zstd -dc \| cmp`',
            `zstd -q -T0 -3 -c < ${drive.path} > ${out} && sync ${out} && dd if=${out} iflag=nocache count=0 status=none && zstd -q -dc ${out} | cmp - ${drive.path}`,
          ],
          ['**sluice backup --compress zstd**', `${NODE} ${CLI} backup --yes --compress zstd ${drive.path} ${out}`],
        ]),
      ),
      table(
        `Clone of a ${mib} drive onto another (loops on /dev/shm), copy + O_DIRECT compare (median of ${runs})`,
        bytes,
        clone,
      ),
      headline(`clone a ${mib} drive`, '`dd iflag=direct oflag=direct` + `cmp`', dd.wallSeconds, ours.wallSeconds),
    );
  } finally {
    rmSync(image, { force: true });
    rmSync(xz, { force: true });
  }
  return sections;
}
