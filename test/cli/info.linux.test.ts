import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { MiB } from '../../common/domain/units.js';
import { collect, spawnCli } from '../support/cli.js';
import { scratchDir } from '../support/loop-device.js';
import { layoutImage, osImage, sh } from '../support/os-image.js';
import { writeDmg } from '../support/udif.js';

const IMAGE_SIZE = 16 * MiB;

async function info(image: string, ...flags: string[]): Promise<Record<string, unknown>> {
  const run = await collect(spawnCli(['info', '--json', ...flags, image]));
  expect(run.code, run.stderr).toBe(0);
  return JSON.parse(run.stdout) as Record<string, unknown>;
}

describe('sluice info: what an image is, before anything is written', () => {
  let dir: string;

  beforeAll(() => {
    dir = scratchDir();
    const image = osImage(dir, IMAGE_SIZE);
    sh(
      dir,
      'xz -T2 -c os.img > os.img.xz && gzip -c os.img > os.img.gz && zstd -q os.img -o os.img.zst && bzip2 -c os.img > os.img.bz2 && zip -q os.zip os.img && qemu-img convert -c -O qcow2 os.img os.qcow2',
    );
    writeDmg(readFileSync(image), join(dir, 'os.dmg'));
  });

  const partitions = {
    type: 'gpt',
    partitions: [
      { number: 1, offset: MiB, size: 8 * MiB, type: 'EFI System', label: 'boot' },
      { number: 2, offset: 9 * MiB, type: 'Linux filesystem', label: 'root' },
    ],
  };

  it.each([
    ['os.img', 'raw', true],
    ['os.img.xz', 'xz', true],
    ['os.img.zst', 'zstd', true],
    ['os.zip', 'zip', true],
    ['os.qcow2', 'qcow2', true],
    ['os.dmg', 'dmg', true],
    ['os.img.gz', 'gzip', false],
  ] as const)('%s: format %s, its size (exact: %s), its GPT with names', async (file, format, exact) => {
    const probe = await info(join(dir, file));
    expect(probe).toMatchObject({ format, size: IMAGE_SIZE, sizeExact: exact, partitionTable: partitions });
    expect(probe['sourceSize']).toBeGreaterThan(0);
  });

  it('bzip2 records no size: said to be unknown', async () => {
    expect(await info(join(dir, 'os.img.bz2'))).toMatchObject({
      format: 'bzip2',
      size: null,
      sizeExact: false,
      partitionTable: { type: 'gpt' },
    });
  });

  it('a raw image’s filesystem labels are read where the GPT has no names', async () => {
    sh(
      dir,
      `cp os.img mbr.img && printf 'label: dos\\nstart=2048, size=16384, type=c\\nstart=18432, type=83\\n' | sfdisk --quiet mbr.img`,
    );
    const probe = await info(join(dir, 'mbr.img'));
    expect(probe['partitionTable']).toMatchObject({
      type: 'mbr',
      partitions: [
        { type: 'FAT32 (LBA)', label: 'BOOT' },
        { type: 'Linux', label: 'rootfs' },
      ],
    });
  });

  it('says when a block map applies, and the text form names it', async () => {
    sh(dir, 'bmaptool create -o os.img.bmap os.img 2>/dev/null');
    expect((await info(join(dir, 'os.img')))['blockMap']).toMatchObject({ from: join(dir, 'os.img.bmap') });
    // The gzip's own size is a hint; the map next to it (os.img.bmap for os.img.gz) makes it exact.
    const mapped = await collect(spawnCli(['info', join(dir, 'os.img.gz')]));
    expect(mapped.stdout).toMatch(/image size:\s+16\.8 MB \(16777216 bytes\)/);
    expect(mapped.stdout).toMatch(
      /block map:\s+.*os\.img\.bmap: .* mapped in \d+ ranges; only those are written and verified/,
    );
    const unmapped = await collect(spawnCli(['info', '--no-bmap', join(dir, 'os.img.gz')]));
    expect(unmapped.stdout).toMatch(
      /image size:\s+at least 16\.8 MB \(at least 16777216 bytes, from the gzip trailer, which gives the size modulo 4 GiB\)/,
    );
    expect(unmapped.stdout).toMatch(/block map:\s+none/);
  });
});

describe('sluice info: the customisation method', () => {
  it.each([
    ['pi-os', 'systemd-firstrun'],
    ['ubuntu', 'cloud-init'],
    ['none', null],
  ] as const)('%s image: "customisation": %s in --json, and a line of text', async (layout, method) => {
    const dir = scratchDir();
    const image = layoutImage(dir, layout);
    const probe = await info(image);
    expect(probe['customisation']).toBe(method);
    expect(probe['customisationNote']).toEqual(expect.any(String));
    const text = await collect(spawnCli(['info', image]));
    expect(text.stdout).toMatch(new RegExp(`customisation: +${method ?? 'none'}: `));
  });
});
