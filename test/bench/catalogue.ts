/**
 * The catalogue rows of `npm run bench` (section "catalogue"): the 1 GiB OS-like image as .xz,
 * served from 127.0.0.1 as an os_list v4 entry, flashed (write + verify) to a loop device on
 * /dev/shm: downloaded without the cache and with the cache tee (the download saved into the
 * cache while it is written), and a second flash from the cache against the same .xz flashed as a
 * local file with its checksum. Each run is a whole `sluice flash` process.
 */
import { createHash } from 'node:crypto';
import { createReadStream, statSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { join } from 'node:path';
import { CLI } from '../support/cli.js';
import { serveFiles } from '../support/file-server.js';
import { assertOwnedLoop, createLoop } from '../support/loop-device.js';
import { medianOf, measure, type Measurement } from './measure.js';
import { compressedFixture, OS_IMAGE_BYTES, osLikeImage } from './os-like-image.js';

const NODE = process.execPath;

async function sha256(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

function table(title: string, rows: { name: string; m: Measurement; reference?: Measurement }[]): string {
  const lines = [
    `### ${title}`,
    '',
    '| run | wall s | MB/s | peak RSS MB | CPU s | time vs reference |',
    '|---|---:|---:|---:|---:|---:|',
  ];
  for (const { name, m, reference } of rows) {
    const ratio = reference === undefined ? '' : `${((100 * m.wallSeconds) / reference.wallSeconds - 100).toFixed(1)}%`;
    lines.push(
      `| ${name} | ${m.wallSeconds.toFixed(2)} | ${(OS_IMAGE_BYTES / m.wallSeconds / 1e6).toFixed(0)} | ${(m.peakRssBytes / 1e6).toFixed(0)} | ${m.cpuSeconds.toFixed(2)} | ${ratio.startsWith('-') || ratio === '' ? ratio : `+${ratio}`} |`,
    );
  }
  return lines.join('\n');
}

/**
 * The medians of `a` and `b`, run in turns (a, b, a, b, …): on a shared machine the load changes
 * from minute to minute, and what is compared should meet the same load.
 */
async function interleaved(
  runs: number,
  a: () => Promise<Measurement>,
  b: () => Promise<Measurement>,
): Promise<[Measurement, Measurement]> {
  const as: Measurement[] = [];
  const bs: Measurement[] = [];
  for (let i = 0; i < runs; i++) {
    as.push(await medianOf(1, a));
    bs.push(await medianOf(1, b));
  }
  const median = (all: Measurement[]) =>
    [...all].sort((x, y) => x.wallSeconds - y.wallSeconds)[Math.floor(all.length / 2)] as Measurement;
  return [median(as), median(bs)];
}

export async function catalogueSection(dir: string, fixtures: string, runs: number): Promise<string> {
  const raw = osLikeImage(fixtures);
  const xz = compressedFixture(fixtures, 'os.img.xz', 'xz -6 -T2 -c os.img > os.img.xz.partial');
  const [downloadSha256, extractSha256] = await Promise.all([sha256(xz), sha256(raw)]);
  const server = await serveFiles([xz], { ranges: true });
  const loop = createLoop({ size: OS_IMAGE_BYTES + 64 * 1024 * 1024, dir, fill: 'allocated' });
  assertOwnedLoop(loop.path);
  const list = join(dir, 'bench-os-list.json');
  const { size } = statSync(xz);
  writeFileSync(
    list,
    JSON.stringify({
      os_list: [
        {
          name: 'Bench OS',
          description: '1 GiB OS-like image',
          url: `${server.base}/os.img.xz`,
          release_date: '2026-11-24',
          extract_size: OS_IMAGE_BYTES,
          extract_sha256: extractSha256,
          image_download_size: size,
          image_download_sha256: downloadSha256,
        },
      ],
    }),
  );
  const cache = join(dir, 'bench-cache');
  const flashOs = (flags: string) =>
    `SLUICE_CACHE_DIR=${cache} ${NODE} ${CLI} flash --yes --repo ${list} ${flags} os:"Bench OS" ${loop.path}`;
  try {
    // Emptied before each run with the tee: every such run downloads and keeps the whole image.
    const [teeOff, teeOn] = await interleaved(
      runs,
      () => measure(flashOs('--no-cache')),
      () => measure(`rm -rf ${cache}/images && ${flashOs('')}`),
    );
    const [local, fromCache] = await interleaved(
      runs,
      () => measure(`${NODE} ${CLI} flash --yes --sha256 ${downloadSha256} ${xz} ${loop.path}`),
      () => measure(flashOs('')),
    );
    return [
      `Load average at the end: ${loadavg()[0]?.toFixed(1)} on ${availableParallelism()} cores.`,
      '',
      table(
        `Catalogue entry, ${OS_IMAGE_BYTES / 2 ** 30} GiB OS-like image as .xz (${(size / 1e6).toFixed(0)} MB) from 127.0.0.1, write + verify, loop on /dev/shm (median of ${runs}, the two rows of each pair run in turns)`,
        [
          { name: '`sluice flash os:…` downloading, `--no-cache`', m: teeOff },
          {
            name: '**`sluice flash os:…` downloading, saved into the cache as it is written**',
            m: teeOn,
            reference: teeOff,
          },
          { name: '`sluice flash --sha256 … os.img.xz` (the same .xz as a local file)', m: local },
          { name: '**`sluice flash os:…` again, from the cache**', m: fromCache, reference: local },
        ],
      ),
    ].join('\n');
  } finally {
    await server.close();
  }
}
