/**
 * The image-format rows of `npm run bench`: each format written and verified to the same loop
 * device on /dev/shm by its reference command (the system decoder into dd, then an O_DIRECT
 * read-back compared with cmp; qemu-img convert for qcow2), by sluice (system decoder where it
 * uses one, and its own), and by etcher-sdk where it supports the format. Peak RSS is given for
 * the largest process and separately for Sluice's helper, its decoder process, and the system
 * tool the decoder runs; peak Private_Dirty for the helper, and for etcher-sdk's process.
 */
import { execFileSync } from 'node:child_process';
import { basename, extname } from 'node:path';
import { CLI } from '../support/cli.js';
import { assertOwnedLoop, createLoop } from '../support/loop-device.js';
import { headline } from './headlines.js';
import { medianOf, mediansInTurns, measure, type Measurement } from './measure.js';
import { compressedFixture, OS_IMAGE_BYTES, osLikeImage } from './os-like-image.js';

const NODE = process.execPath;

interface Format {
  name: string;
  file: string;
  /** Makes the fixture from os.img with the reference tool, into FILE.partial. */
  make: string;
  /** The reference: a command that writes the decoded image to $DEV (verification follows). */
  reference: string;
  referenceName: string;
  /** Also run sluice with --builtin-decoders (it uses a system tool by default). */
  builtin?: boolean;
  etcher?: boolean;
}

export const FORMATS: Format[] = [
  {
    name: 'xz (multi-block, xz -T2)',
    file: 'os.img.xz',
    make: 'xz -6 -T2 -c os.img > os.img.xz.partial',
    reference: 'xz -dc -T2 os.img.xz | dd of=$DEV bs=4M iflag=fullblock oflag=direct conv=fsync status=none',
    referenceName: '`xz -dc -T2 | dd oflag=direct`',
    builtin: true,
    etcher: true,
  },
  {
    name: 'gz',
    file: 'os.img.gz',
    make: 'gzip -6 -c os.img > os.img.gz.partial',
    reference: 'gzip -dc os.img.gz | dd of=$DEV bs=4M iflag=fullblock oflag=direct conv=fsync status=none',
    referenceName: '`gzip -dc | dd oflag=direct`',
    etcher: true,
  },
  {
    name: 'zstd',
    file: 'os.img.zst',
    make: 'zstd -q -3 -c os.img > os.img.zst.partial',
    reference: 'zstd -dc os.img.zst | dd of=$DEV bs=4M iflag=fullblock oflag=direct conv=fsync status=none',
    referenceName: '`zstd -dc | dd oflag=direct`',
    builtin: true,
  },
  {
    name: 'zip (deflate)',
    file: 'os.zip',
    make: 'zip -q -6 os.zip.partial os.img',
    reference: 'unzip -p os.zip os.img | dd of=$DEV bs=4M iflag=fullblock oflag=direct conv=fsync status=none',
    referenceName: '`unzip -p | dd oflag=direct`',
    etcher: true,
  },
  {
    name: 'bz2',
    file: 'os.img.bz2',
    make: 'bzip2 -9 -c os.img > os.img.bz2.partial',
    reference: 'bzip2 -dc os.img.bz2 | dd of=$DEV bs=4M iflag=fullblock oflag=direct conv=fsync status=none',
    referenceName: '`bzip2 -dc | dd oflag=direct`',
  },
  {
    name: 'qcow2 (zlib-compressed clusters)',
    file: 'os.qcow2',
    make: 'qemu-img convert -c -O qcow2 os.img os.qcow2.partial',
    reference: 'qemu-img convert -n -t none -O raw os.qcow2 $DEV && sync',
    referenceName: '`qemu-img convert -n -t none -O raw`',
  },
];

/** Sluice's processes, and etcher-sdk's one process (etcher-flash.ts), told apart by their command lines. */
export const WATCH: Record<string, (argv: string[]) => boolean> = {
  cli: (argv) => argv.some((a) => a.endsWith('run/sluice.js')),
  probe: (argv) => argv.some((a) => a.endsWith('run/probe.js')),
  // privileged/main.js and helper/main.js: baseline builds (BENCH_BASELINE_CLI) from before the helper was bundled, and before its entry moved to privileged/.
  helper: (argv) => argv.some((a) => /(run\/helper|privileged\/main|helper\/main)\.js$/.test(a)),
  decoder: (argv) => argv.some((a) => a.endsWith('run/decoder.js')),
  tool: (argv) => ['xz', 'zstd', 'lbzip2', 'bzip2'].includes(basename(argv[0] ?? '')),
  etcher: (argv) => argv.some((a) => a.endsWith('etcher-flash.js')),
};

/**
 * Peak Private_Dirty of the process that writes the drive: Sluice's helper, or etcher-sdk's one
 * process, which does the helper's job there. Issue 16's target for the helper: ≤ 16 MB.
 */
export function writerPrivateBytes(m: Measurement): number | undefined {
  return m.privatePeaks.get('helper') ?? m.privatePeaks.get('etcher');
}

/** The header of the column writerPrivateBytes fills. */
export const WRITER_PRIVATE_HEADER =
  "private MB (Sluice's helper, which does not decode; etcher-sdk's one process, which does)";

interface Row {
  name: string;
  /** null: the run failed, and its name says why. */
  m: Measurement | null;
  reference?: Measurement;
}

const mb = (bytes: number | undefined) => (bytes === undefined ? '' : (bytes / 1e6).toFixed(0));

function table(title: string, rows: Row[]): string {
  const lines = [
    `### ${title}`,
    '',
    `| run | wall s | MB/s | peak RSS MB (largest process) | helper MB | ${WRITER_PRIVATE_HEADER} | decoder MB | system tool MB | CPU s | CPU % of a core | speed vs reference |`,
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const { name, m, reference } of rows) {
    if (m === null) {
      lines.push(`| ${name.replaceAll('|', '\\|')} |  |  |  |  |  |  |  |  |  |  |`);
      continue;
    }
    const ratio = reference === undefined ? '' : `${(reference.wallSeconds / m.wallSeconds).toFixed(2)}×`;
    lines.push(
      `| ${name.replaceAll('|', '\\|')} | ${m.wallSeconds.toFixed(2)} | ${mb(OS_IMAGE_BYTES / m.wallSeconds)} | ${mb(m.peakRssBytes)} | ${mb(m.peaks.get('helper'))} | ${mb(writerPrivateBytes(m))} | ${mb(m.peaks.get('decoder'))} | ${mb(m.peaks.get('tool'))} | ${m.cpuSeconds.toFixed(2)} | ${((100 * m.cpuSeconds) / m.wallSeconds).toFixed(1)} | ${ratio} |`,
    );
  }
  return lines.join('\n');
}

/** The formats to run: all, or those named in BENCH_FORMATS (comma-separated file names, "os.img.xz"). */
function selected(): Format[] {
  const only = process.env['BENCH_FORMATS']?.split(',');
  return only === undefined ? FORMATS : FORMATS.filter((f) => only.includes(f.file));
}

/**
 * One table per format. `fixtures` keeps the 1 GiB image and its compressed forms between runs
 * (BENCH_FIXTURES, default /var/tmp/sluice-bench-fixtures); `etcher` runs etcher-sdk.
 */
export async function formatSections(
  scratch: string,
  fixtures: string,
  runs: number,
  etcher: (image: string, device: string, bytes: number) => Promise<Measurement>,
  etcherName: string,
  /** Another build's CLI to run beside this one (BENCH_BASELINE_CLI), or undefined. */
  baselineCli: string | undefined,
): Promise<string[]> {
  const raw = osLikeImage(fixtures);
  const loop = createLoop({ size: OS_IMAGE_BYTES + 64 * 1024 * 1024, dir: scratch, fill: 'allocated' });
  assertOwnedLoop(loop.path);
  const verify = `dd if=${loop.path} bs=4M iflag=direct,count_bytes count=${OS_IMAGE_BYTES} status=none | cmp - ${raw}`;
  const sections: string[] = [];
  for (const format of selected()) {
    const image = compressedFixture(fixtures, format.file, format.make);
    const reference = () => measure(`cd ${fixtures} && ${format.reference.replaceAll('$DEV', loop.path)} && ${verify}`);
    const sluice = (flags: string, cli = CLI) =>
      measure(`${NODE} ${cli} flash --yes --no-eject ${flags} ${image} ${loop.path}`, { watch: WATCH });
    const baseline = baselineCli;
    // The reference, Sluice and a baseline build in turns (measure.ts mediansInTurns): the ratios between them are the point.
    const [ref, ours, base] = (await mediansInTurns(runs, [
      reference,
      () => sluice(''),
      ...(baseline === undefined ? [] : [() => sluice('', baseline)]),
    ])) as [Measurement, Measurement, Measurement | undefined];
    const rows: Row[] = [{ name: format.referenceName, m: ref }];
    rows.push({ name: '**sluice flash**', m: ours, reference: ref });
    if (base !== undefined) rows.push({ name: `sluice flash, baseline (${baseline})`, m: base, reference: ref });
    if (format.builtin === true)
      rows.push({
        name: 'sluice flash --builtin-decoders',
        m: await medianOf(runs, () => sluice('--builtin-decoders')),
        reference: ref,
      });
    if (format.etcher === true) {
      try {
        rows.push({
          name: etcherName,
          m: await medianOf(1, () => etcher(image, loop.path, OS_IMAGE_BYTES)),
          reference: ref,
        });
      } catch (error) {
        // The last line the command printed is its own reason.
        const why = (error instanceof Error ? error.message : String(error))
          .split('\n')
          .filter((line) => line.trim() !== '' && !line.startsWith('bench-time') && !line.startsWith('Command exited'))
          .pop();
        rows.push({ name: `${etcherName}: failed: ${why ?? 'no reason given'}`, m: null });
      }
    }
    const job = `1 GiB OS image as \`${extname(format.file)}\``;
    const ratioLine = headline(job, `${format.referenceName} + read-back`, ref.wallSeconds, ours.wallSeconds);
    const load = execFileSync('cat', ['/proc/loadavg'], { encoding: 'utf8' }).split(' ').slice(0, 3).join(' ');
    sections.push(
      table(
        `${format.name}: ${format.file}, 1 GiB OS-like image, write + verify, loop device on /dev/shm (median of ${runs}, the first three rows run in turns; load average after: ${load})`,
        rows,
      ),
      ratioLine,
    );
  }
  return sections;
}
