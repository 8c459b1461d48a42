import { execFileSync } from 'node:child_process';
import { readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ApiResult } from '../../../common/contracts/api-result.js';
import { MiB } from '../../../common/domain/units.js';
import { ImageHandOff } from '../../../electron/core/image-hand-off.js';
import { SettingsStore } from '../../../electron/core/settings-store.js';
import { detectPartitionTable, PARTITION_SNIFF_BYTES } from '../../../user/images/formats/partition-table.js';
import { builtCreateAppService, builtImageProbe } from '../../support/built-modules.js';
import { qcow2SharedL2Table } from '../../support/hostile-images.js';
import { watchDescendants } from '../../support/processes.js';

const { probeImage } = await builtImageProbe();

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sluice-probe-'));
});
afterEach(async () => rm(dir, { recursive: true, force: true }));

/** A disk image file with a real partition table, made by sfdisk. */
function partitioned(name: string, script: string): string {
  const path = join(dir, name);
  writeFileSync(path, '');
  truncateSync(path, 8 * MiB);
  execFileSync('sfdisk', ['--quiet', path], { input: script });
  return path;
}

describe('probing an image', () => {
  it('names a raw image, its size and its GPT partition table', async () => {
    const path = partitioned('os.img', 'label: gpt\n,4MiB,L\n');
    const probed = await probeImage(path);
    expect(probed.info).toEqual({
      source: path,
      name: 'os.img',
      origin: 'file',
      format: 'raw',
      sourceSize: 8 * MiB,
      size: 8 * MiB,
      sizeExact: true,
      partitionTable: {
        type: 'gpt',
        partitions: [{ number: 1, offset: 1 * MiB, size: 4 * MiB, type: 'Linux filesystem', label: null }],
      },
      disc: null,
      entry: null,
      blockMap: null,
      checksum: null,
      // The app's Customise step is offered from these: a Linux partition alone has no first-boot method.
      customisation: null,
      customisationNote: expect.stringMatching(/^No FAT boot partition \(looked for cmdline\.txt and config\.txt/),
    });
    expect(probed.local?.identity.size).toBe(8 * MiB);
  });

  it('finds a GPT on a 4Kn image too, where the header sits at byte 4096 (this sfdisk cannot make one, so the header is placed by hand)', () => {
    const head = new Uint8Array(PARTITION_SNIFF_BYTES);
    head.set(Buffer.from('EFI PART'), 4096);
    expect(detectPartitionTable(head)).toBe('gpt');
    expect(detectPartitionTable(head.subarray(0, 4096))).toBe('none');
  });

  it('finds an MBR', async () => {
    expect((await probeImage(partitioned('dos.img', 'label: dos\n,4MiB,c\n'))).info.partitionTable?.type).toBe('mbr');
  });

  it('does not take a FAT boot sector (0x55AA, no partition entries) for an MBR', async () => {
    const path = join(dir, 'fat.img');
    writeFileSync(path, '');
    truncateSync(path, 8 * MiB);
    execFileSync('mkfs.vfat', [path], { stdio: 'ignore' });
    expect((await probeImage(path)).info.partitionTable?.type).toBe('none');
  });

  it('names a compressed image by its content, with the size gzip hints at and the partition table of its decoded start', async () => {
    const raw = partitioned('os.img', 'label: dos\n,4MiB,c\n');
    const path = join(dir, 'os.bin');
    writeFileSync(path, gzipSync(readFileSync(raw)));
    expect((await probeImage(path)).info).toMatchObject({
      format: 'gzip',
      size: 8 * MiB,
      sizeExact: false,
      partitionTable: { type: 'mbr', partitions: [{ type: 'FAT32 (LBA)', size: 4 * MiB }] },
    });
  });

  it('says which file is missing', async () => {
    const missing = join(dir, 'nope.img');
    await expect(probeImage(missing)).rejects.toMatchObject({
      name: 'JobError',
      failure: { code: 'source-not-found', message: expect.stringContaining(missing) },
    });
  });

  it('refuses an empty file and a directory with a sentence each', async () => {
    const empty = join(dir, 'empty.img');
    writeFileSync(empty, '');
    await expect(probeImage(empty)).rejects.toMatchObject({
      failure: { code: 'source-read-error', message: expect.stringContaining('empty') },
    });
    await expect(probeImage(dir)).rejects.toMatchObject({ failure: { code: 'source-read-error' } });
  });
});

describe('the main process while a hostile image is probed', () => {
  it('keeps answering (settings, drives) while the probe process runs out of memory on a hostile qcow2, which is refused within 5 s', async () => {
    const image = join(dir, 'shared-l2.qcow2');
    qcow2SharedL2Table(image);
    const createAppService = await builtCreateAppService();
    const service = createAppService({
      settings: await SettingsStore.open(join(dir, 'settings.json')),
      launchHelper: () => {
        throw new Error('nothing is flashed here');
      },
      pickImage: async () => null,
      sshDir: '/nonexistent/.ssh',
      pickBackupFile: async () => null,
      openExternal: async () => undefined,
      showInFolder: () => undefined,
      effects: { preventSleep: () => () => undefined, setProgress: () => undefined, notify: () => undefined },
      emit: () => undefined,
      handOff: new ImageHandOff({ platform: 'linux', appInArguments: false }, () => undefined),
      cacheDir: join(dir, 'cache'),
      stationLog: join(dir, 'station-log.jsonl'),
    });
    try {
      await service.invoke('listDrives', []);
      const probes = watchDescendants(process.pid, (argv) => argv.some((a) => a.endsWith('out/run/probe.js')));
      const started = performance.now();
      let chosen: ApiResult<unknown> | null = null;
      const choosing = service.invoke('selectImage', [image]).then((result) => (chosen = result));
      // Calls the page makes, one after another, for as long as the probe runs: each is answered
      // at once, as a main process blocked by parsing (or killed by its memory) could not.
      const answers: { ms: number; ok: boolean; during: boolean }[] = [];
      while (chosen === null) {
        const asked = performance.now();
        const result = await service.invoke(answers.length % 2 === 0 ? 'getSettings' : 'listDrives', []);
        answers.push({ ms: performance.now() - asked, ok: result.ok, during: chosen === null });
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      await choosing;
      const ms = performance.now() - started;
      const seen = [...probes.stop().values()];
      const during = answers.filter((a) => a.during);
      console.log(
        `hostile qcow2 chosen in the app: refused after ${ms.toFixed(0)} ms; ${during.length} calls answered meanwhile, the slowest in ${Math.max(...during.map((a) => a.ms)).toFixed(0)} ms; probe peak RSS seen ${(Math.max(...seen.map((p) => p.peakBytes)) / 1e6).toFixed(1)} MB`,
      );
      expect(chosen).toMatchObject({ ok: false, error: { code: 'source-corrupt' } });
      expect(ms).toBeLessThan(5000);
      expect(seen).toHaveLength(1);
      expect(during.length).toBeGreaterThan(0);
      expect(during.every((a) => a.ok && a.ms < 250)).toBe(true);
      // The main process is unharmed: it answers, and holds no chosen image.
      expect(await service.invoke('getSettings', [])).toMatchObject({ ok: true });
      expect(await service.invoke('clearImage', [])).toMatchObject({ ok: true });
    } finally {
      await service.close();
    }
  });
});
