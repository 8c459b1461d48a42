import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmdirSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import * as v from 'valibot';
import { afterEach, describe, expect, it } from 'vitest';
import type { ApiResult } from '../../../common/contracts/api-result.js';
import type { EventPayloads } from '../../../common/contracts/ipc-contract.js';
import { EXTERNAL_LINKS } from '../../../common/app/links.js';
import { typedName } from '../../../common/app/typed-name.js';
import { listDrives } from '../../../user/drives/list-drives.js';
import type { ImageInfo } from '../../../common/domain/image.js';
import type { DriveInfo } from '../../../common/contracts/app-models.js';
import type { AppService } from '../../../electron/core/app-service.js';
import { ImageHandOff } from '../../../electron/core/image-hand-off.js';
import { SettingsStore } from '../../../electron/core/settings-store.js';
import { MiB } from '../../../common/domain/units.js';
import { builtCreateAppService } from '../../support/built-modules.js';
import { describeDevices } from '../../support/device-suite.js';
import {
  createLoop,
  digestFile,
  partitionedLoop,
  readBytes,
  scratchDir,
  writeRandomFile,
} from '../../support/loop-device.js';
import { slowSourceDrive } from '../../support/throttle.js';
import { serveFiles } from '../../support/file-server.js';
import {
  LAYOUT_BOOT_OFFSET,
  LAYOUT_BOOT_SIZE,
  LAYOUT_IMAGE_SIZE,
  osImage,
  PI_CMDLINE,
  sh,
} from '../../support/os-image.js';
import { serveLayoutCatalogue } from '../../support/catalogue.js';
import { differencesOutside, imageFreeSpace } from '../../support/free-space.js';
import { ProfileSchema } from '../../../common/domain/customisation.js';
import { testLauncher } from '../../e2e/app-harness.js';
import type { HelperJob } from '../../../common/contracts/helper-protocol.js';

interface Harness {
  service: AppService;
  handOff: ImageHandOff;
  events: { [E in keyof EventPayloads]: EventPayloads[E][] };
  effects: string[];
  opened: string[];
  /** Files "Show in folder" opened. */
  shown: string[];
  /** What the next backup save dialog answers, and the names it was offered. */
  saveAs: string | null;
  suggestedNames: string[];
  /** Every job the core handed to a helper, in order. */
  jobs: HelperJob[];
}

let current: Harness | null = null;
afterEach(async () => {
  await current?.service.close();
  current = null;
});

/**
 * The core as Electron wires it (the real drive scanner), with the test launcher (own loop devices
 * only, its helper in `cgroupDir` when given) and recorders for the desktop effects and dialogs.
 */
async function harness(
  dir: string,
  settings: Parameters<SettingsStore['update']>[0] = {},
  cgroupDir?: string,
  /** A loop device of the test's, listed as an internal disk of this computer (it has none Sluice may touch). */
  internal?: string,
): Promise<Harness> {
  const store = await SettingsStore.open(join(dir, 'settings.json'));
  await store.update({ showVirtual: true, ...settings });
  const h: Harness = {
    service: undefined as never,
    handOff: new ImageHandOff({ platform: 'linux', appInArguments: false }, () => undefined),
    events: {
      drivesChanged: [],
      jobProgress: [],
      jobEnd: [],
      imageOpened: [],
      download: [],
      stationRow: [],
      stationStatus: [],
    },
    effects: [],
    opened: [],
    shown: [],
    saveAs: null,
    suggestedNames: [],
    jobs: [],
  };
  const launch = await testLauncher(cgroupDir);
  const createAppService = await builtCreateAppService();
  h.service = createAppService({
    settings: store,
    launchHelper: (options) => {
      h.jobs.push(options.job);
      return launch(options);
    },
    pickImage: async () => null,
    sshDir: '/nonexistent/.ssh',
    pickBackupFile: async (suggestedName) => {
      h.suggestedNames.push(suggestedName);
      return h.saveAs;
    },
    openExternal: async (url) => void h.opened.push(url),
    showInFolder: (path) => void h.shown.push(path),
    effects: {
      preventSleep: () => {
        h.effects.push('sleep blocked');
        return () => void h.effects.push('sleep allowed');
      },
      setProgress: (fraction) => void h.effects.push(fraction === null ? 'progress cleared' : 'progress'),
      notify: (title) => void h.effects.push(`notified: ${title}`),
    },
    emit: (event, payload) => void (h.events[event] as unknown[]).push(payload),
    handOff: h.handOff,
    cacheDir: join(dir, 'cache'),
    stationLog: join(dir, 'station-log.jsonl'),
    ...(internal === undefined
      ? {}
      : {
          listDrives: async (visibility) =>
            (await listDrives(visibility)).map((d) => (d.device === internal ? { ...d, system: 'internal' } : d)),
        }),
  });
  current = h;
  return h;
}

function value<T>(result: ApiResult<T>): T {
  if (!result.ok) throw new Error(`expected ok, got ${result.error.code}: ${result.error.message}`);
  return result.value;
}

async function drives(service: AppService): Promise<DriveInfo[]> {
  return value(await service.handlers.listDrives());
}

async function flashEnded(h: Harness): Promise<EventPayloads['jobEnd']> {
  await expect.poll(() => h.events.jobEnd.length, { timeout: 30_000 }).toBe(1);
  return h.events.jobEnd[0] as EventPayloads['jobEnd'];
}

/**
 * `raw` flashed onto `device` under the free-space rule (the default): the bytes written and those
 * left out make the image, and every byte outside the image's free space is the image's.
 */
async function expectFlashed(end: EventPayloads['jobEnd'], device: string, raw: string, size: number): Promise<void> {
  const [result] = end.results;
  expect(result).toMatchObject({ status: 'ok', target: device, verified: true });
  expect(result?.status === 'ok' ? result.bytes + (result.skipped ?? 0) : 0).toBe(size);
  expect(
    differencesOutside(readBytes(device, 0, size), readFileSync(raw), await imageFreeSpace(raw, scratchDir())),
  ).toEqual([]);
}

describeDevices('the main-process core (what Electron and the browser bridge both run)', () => {
  it('checks every call against its schema before any handler runs', async () => {
    const { service } = await harness(scratchDir());
    const refused = async (method: string, args: unknown) => {
      const result = await service.invoke(method, args);
      expect(result.ok, `${method} ${JSON.stringify(args)}`).toBe(false);
      return result.ok ? '' : result.error.code;
    };
    expect(await refused('readFile', ['/etc/shadow'])).toBe('invalid-request');
    expect(await refused('constructor', [])).toBe('invalid-request');
    expect(await refused('getSettings', 'not a list')).toBe('invalid-request');
    expect(await refused('getSettings', [1])).toBe('invalid-request');
    expect(await refused('selectImage', [42])).toBe('invalid-request');
    expect(await refused('selectImage', [''])).toBe('invalid-request');
    expect(await refused('updateSettings', [{ verify: 'no' }])).toBe('invalid-request');
    expect(await refused('updateSettings', [{ runAsRoot: true }])).toBe('invalid-request');
    expect(await refused('startFlash', [{ image: '/x.img', targets: ['/dev/loop9', '/dev/loop9'] }])).toBe(
      'invalid-request',
    );
    expect(await refused('startFlash', [{ image: '/x.img', targets: [] }])).toBe('invalid-request');
    expect(await refused('openExternal', ['https://evil.example/'])).toBe('link-not-allowed');
    expect(value(await service.invoke('openExternal', [EXTERNAL_LINKS.fakeCardTest]))).toBeNull();
    expect(current?.opened).toEqual([EXTERNAL_LINKS.fakeCardTest]);
  });

  it('an internal disk is flashed or backed up only after the core itself saw its name typed, for the medium in it', async () => {
    const dir = scratchDir();
    const image = join(dir, 'image.img');
    writeRandomFile(image, 2 * MiB);
    const disk = createLoop({ size: 4 * MiB, dir });
    const h = await harness(dir, {}, undefined, disk.path);
    const { service } = h;
    value(await service.handlers.selectImage(image));
    const listed = (await drives(service)).find((d) => d.device === disk.path);
    expect(listed?.verdicts.map((v) => v.kind)).toContain('system');
    const medium = listed?.medium ?? null;
    const flash = () => service.handlers.startFlash({ image, targets: [disk.path], media: [medium] });
    const refusedAsInternal = { ok: false, error: { code: 'target-system' } };

    // Nothing typed: refused, and the page cannot claim a confirmation in the start request any more.
    expect(await flash()).toMatchObject(refusedAsInternal);
    expect(
      await service.invoke('startFlash', [{ image, targets: [disk.path], confirmedSystemDrives: [disk.path] }]),
    ).toMatchObject({ ok: false, error: { code: 'invalid-request' } });
    // A backup of it, with its file chosen: refused before anything is read.
    const file = join(dir, 'disk.img');
    h.saveAs = file;
    expect(value(await service.handlers.chooseBackupFile(disk.path, null))).toBe(file);
    const backup = { device: disk.path, file, compress: null, trimToPartitions: false };
    expect(await service.handlers.startBackup(backup)).toMatchObject({
      ok: false,
      error: {
        code: 'target-system',
        message: `${disk.path} is an internal disk of this computer: backing it up needs its name typed. Nothing was read.`,
      },
    });
    expect(existsSync(file)).toBe(false);
    // A wrong name, or the right one for another medium, is not kept.
    const name = typedName(disk.path);
    expect(await service.handlers.confirmDrive({ device: disk.path, medium, typed: name.slice(0, -1) })).toMatchObject({
      ok: false,
      error: {
        code: 'target-system',
        message: `What was typed is not ${name}, the name of ${disk.path}. Nothing was chosen.`,
      },
    });
    const otherMedium = String(Number(medium) - 1);
    expect(await service.handlers.confirmDrive({ device: disk.path, medium: otherMedium, typed: name })).toMatchObject({
      ok: false,
      error: { code: 'target-not-found' },
    });
    expect(await flash()).toMatchObject(refusedAsInternal);
    expect(h.jobs).toEqual([]);

    // Its name typed: a start refused on its image (moved away) keeps it, as the disk was not touched.
    value(await service.handlers.confirmDrive({ device: disk.path, medium, typed: name }));
    renameSync(image, `${image}.away`);
    expect(await flash()).toMatchObject({ ok: false, error: { code: 'source-not-found' } });
    renameSync(`${image}.away`, image);
    expect(h.jobs).toEqual([]);
    // So does a backup of it refused on its file (a folder now stands where the file goes).
    mkdirSync(file);
    expect(await service.handlers.startBackup(backup)).toMatchObject({
      ok: false,
      error: { code: 'target-not-block-device' },
    });
    rmdirSync(file);
    expect(h.jobs).toEqual([]);
    // Two starts at once on that one typed name: one job.
    const starts = await Promise.all([flash(), flash()]);
    expect(starts.filter((s) => s.ok)).toHaveLength(1);
    expect(starts.find((s) => !s.ok)).toMatchObject({ ok: false });
    const end = await flashEnded(h);
    expect(h.jobs).toHaveLength(1);
    expect(end.results).toEqual([expect.objectContaining({ status: 'ok', target: disk.path, verified: true })]);
    expect(readBytes(disk.path, 0, 2 * MiB).equals(readFileSync(image))).toBe(true);
    // That typed name allowed one job: another start needs it typed again.
    expect(await flash()).toMatchObject(refusedAsInternal);
  });

  it('refuses to start a flash the app itself can see is wrong, before the helper is started', async () => {
    const dir = scratchDir();
    const image = join(dir, 'image.img');
    writeRandomFile(image, 2 * MiB);
    const tiny = createLoop({ size: 1 * MiB, dir });
    const locked = createLoop({ size: 4 * MiB, dir, readOnly: true });
    const fits = createLoop({ size: 4 * MiB, dir });
    const h = await harness(dir);
    const { service } = h;
    const start = async (targets: string[], chosen = image) => {
      const result = await service.handlers.startFlash({ image: chosen, targets });
      return result.ok ? 'started' : result.error.code;
    };

    expect(await start([locked.path])).toBe('no-image');
    value(await service.handlers.selectImage(image));
    expect(await start([locked.path], join(dir, 'other.img'))).toBe('no-image');
    expect(await start(['/dev/sdz'])).toBe('unknown-drive');
    expect(await start([tiny.path])).toBe('target-too-small');
    expect(await start([locked.path])).toBe('target-read-only');
    // This machine's own disk holds the running system: refused, even with its name "typed" (and the helper refuses it regardless).
    const system = (await drives(service)).find((d) => d.verdicts.some((v) => v.kind === 'system' && v.running));
    expect(system).toBeDefined();
    expect(await start([system?.device ?? ''])).toBe('target-system');
    // Its name typed changes nothing: the core keeps typed names only for internal disks a person may choose.
    const typedRunning = {
      device: system?.device ?? '',
      medium: system?.medium ?? null,
      typed: typedName(system?.device ?? ''),
    };
    expect(await service.handlers.confirmDrive(typedRunning)).toMatchObject({
      ok: false,
      error: { code: 'invalid-request' },
    });
    expect(await start([system?.device ?? ''])).toBe('target-system');
    expect(await service.handlers.startFlash({ image: image, targets: [tiny.path] })).toMatchObject({
      ok: false,
      error: { message: expect.stringMatching(new RegExp(`^${tiny.path} is too small: the image needs`)) as unknown },
    });

    // A drive that holds another medium than the one the user saw (a card swapped in the same reader).
    const seen = (await drives(service)).find((d) => d.device === fits.path)?.medium;
    expect(seen).toMatch(/^\d+$/);
    expect(
      await service.handlers.startFlash({
        image,
        targets: [fits.path],
        media: [String(Number(seen) - 1)],
      }),
    ).toMatchObject({
      ok: false,
      error: {
        code: 'target-not-found',
        message: `${fits.path} holds another card than the one you chose (swapped in the same reader?). Choose the drive again.`,
      },
    });

    const listed = await drives(service);
    const kinds = (device: string) => listed.find((d) => d.device === device)?.verdicts.map((v) => v.kind);
    expect(kinds(tiny.path)).toEqual(['too-small', 'virtual']);
    expect(kinds(locked.path)).toEqual(['read-only', 'virtual']);

    expect(h.events.jobEnd).toEqual([]);
    expect(h.effects).toEqual([]);
  });

  it('checks and erases only the card the user saw: another in the same reader is refused before any helper starts, and the helper is told the one seen', async () => {
    const dir = scratchDir();
    const card = createLoop({ size: 64 * MiB, dir });
    const h = await harness(dir);
    const seen = (await drives(h.service)).find((d) => d.device === card.path)?.medium ?? null;
    expect(seen).toMatch(/^\d+$/);
    const other = String(Number(seen) + 1000);
    const refusal = {
      ok: false,
      error: {
        code: 'target-not-found',
        message: `${card.path} holds another card than the one you chose (swapped in the same reader?). Choose the drive again.`,
      },
    };
    expect(await h.service.handlers.startCheck(card.path, other)).toMatchObject(refusal);
    expect(await h.service.handlers.startErase({ device: card.path, medium: other, label: null })).toMatchObject(
      refusal,
    );
    expect(h.jobs).toEqual([]);

    value(await h.service.handlers.startCheck(card.path, seen));
    expect((await flashEnded(h)).results[0]).toMatchObject({ status: 'ok', target: card.path });
    expect(h.jobs).toEqual([{ kind: 'check', target: card.path, medium: seen }]);
  });

  it('a compressed image is probed (exact size, partition names) and flashed through a decoder; the device holds the decoded bytes', async () => {
    const dir = scratchDir();
    const raw = osImage(dir, 24 * MiB);
    sh(dir, 'xz -T2 -3 -k os.img');
    const loop = createLoop({ size: 32 * MiB, dir });
    const h = await harness(dir);
    const info = value(await h.service.handlers.selectImage(`${raw}.xz`));
    expect(info).toMatchObject({
      format: 'xz',
      size: 24 * MiB,
      sizeExact: true,
      partitionTable: { type: 'gpt' },
      entry: null,
      blockMap: null,
      checksum: null,
    });
    expect(info.partitionTable?.partitions.map((p) => p.label)).toEqual(['boot', 'root']);
    // The drive's verdicts use the decoded size, not the file's.
    expect((await drives(h.service)).find((d) => d.device === loop.path)?.verdicts.map((v) => v.kind)).toEqual([
      'virtual',
    ]);

    value(await h.service.handlers.startFlash({ image: `${raw}.xz`, targets: [loop.path] }));
    await expectFlashed(await flashEnded(h), loop.path, raw, 24 * MiB);
  });

  it('a corrupt compressed image fails the flash with the decoder’s error, never a success', async () => {
    const dir = scratchDir();
    const image = join(dir, 'image.img.gz');
    const packed = gzipSync(randomBytes(4 * MiB), { level: 1 });
    const middle = Math.floor(packed.length / 2);
    packed.writeUInt8(packed.readUInt8(middle) ^ 0xff, middle); // inside the deflate stream: the CRC or the stream itself fails
    writeFileSync(image, packed);
    const loop = createLoop({ size: 8 * MiB, dir });
    const h = await harness(dir);
    value(await h.service.handlers.selectImage(image));
    value(await h.service.handlers.startFlash({ image: image, targets: [loop.path] }));
    const end = await flashEnded(h);
    expect(end.results).toMatchObject([
      { status: 'failed', target: loop.path, code: expect.stringMatching(/^source-(corrupt|truncated)$/) as unknown },
    ]);
    expect(h.effects).toContain('notified: Flash failed');
  });

  it('an image at a web address is probed from its first bytes and downloaded while it is written; a 404 and a non-web address are refused when chosen', async () => {
    const dir = scratchDir();
    const raw = osImage(dir, 24 * MiB);
    sh(dir, 'xz -T2 -3 -k os.img');
    const server = await serveFiles([`${raw}.xz`]);
    try {
      const loop = createLoop({ size: 32 * MiB, dir });
      const h = await harness(dir);
      const url = `${server.base}/os.img.xz`;
      const info = value((await h.service.invoke('openImageUrl', [url])) as ApiResult<ImageInfo>);
      expect(info).toMatchObject({
        source: url,
        name: 'os.img.xz',
        origin: 'url',
        format: 'xz',
        size: null,
        partitionTable: null,
      });
      value(await h.service.handlers.startFlash({ image: url, targets: [loop.path] }));
      await expectFlashed(await flashEnded(h), loop.path, raw, 24 * MiB);
      // The download is reported apart from the writing, to its last byte, before the end.
      const downloadSize = statSync(`${raw}.xz`).size;
      expect(h.events.download.at(-1)).toEqual({
        bytesDone: downloadSize,
        bytesTotal: downloadSize,
        speed: expect.any(Number) as unknown,
        notice: null,
      });

      expect(await h.service.invoke('openImageUrl', [`${server.base}/gone.img.xz`])).toMatchObject({
        ok: false,
        error: { code: 'source-read-error', message: expect.stringContaining('404') as unknown },
      });
      for (const address of ['file:///etc/passwd', 'ftp://example.org/os.img', 'not a url']) {
        expect(await h.service.invoke('openImageUrl', [address])).toMatchObject({
          ok: false,
          error: { code: 'invalid-request' },
        });
      }
    } finally {
      await server.close();
    }
  });

  it('an OS chosen from the catalogue is customised by the method its init_format chooses: previewed, then flashed, verified and kept in the cache', async () => {
    const dir = scratchDir();
    const server = await serveLayoutCatalogue(dir, [
      { name: 'Pi OS with cloud-init', layout: 'pi-os', initFormat: 'cloudinit' },
    ]);
    try {
      const loop = createLoop({ size: LAYOUT_IMAGE_SIZE + 16 * MiB, dir });
      const h = await harness(dir, { repositories: [server.top] });
      value(await h.service.handlers.readCatalogue(server.top));
      const info = value(await h.service.handlers.chooseCatalogueOs(server.top, ['Pi OS with cloud-init']));
      const profile = v.parse(ProfileSchema, { hostname: 'lab-{n}', timezone: 'Europe/London' });
      const preview = value(await h.service.handlers.previewCustomisation(profile, 1));
      expect(preview).toMatchObject({ method: 'cloud-init', hostnames: ['lab-1'] });
      expect(preview.why).toMatch(
        /^The catalogue entry chooses cloud-init \(init_format "cloudinit"\): the boot partition \(partition 1\) has cmdline\.txt and config\.txt/,
      );
      expect(preview.files[0]?.map((f) => f.name).sort()).toEqual(['cmdline.txt', 'meta-data', 'user-data']);

      value(
        await h.service.handlers.startFlash({
          image: info.source,
          targets: [loop.path],
          customise: profile,
        }),
      );
      const end = await flashEnded(h);
      expect(end.results).toMatchObject([{ status: 'ok', target: loop.path, verified: true, customised: true }]);
      const boot = (name: string) =>
        execFileSync('mtype', ['-i', `${loop.path}@@${LAYOUT_BOOT_OFFSET}`, `::/${name}`], {
          encoding: 'utf8',
          stdio: ['ignore', 'pipe', 'ignore'],
        });
      expect(boot('user-data')).toMatch(/hostname: lab-1/);
      expect(boot('cmdline.txt')).toBe(`${PI_CMDLINE.trimEnd()} ds=nocloud;s=file:///boot/firmware/\n`);
      const part = join(dir, 'boot.part');
      writeFileSync(part, readBytes(loop.backing, LAYOUT_BOOT_OFFSET, LAYOUT_BOOT_SIZE));
      execFileSync('fsck.fat', ['-n', part], { stdio: 'ignore' });
      expect(value(await h.service.handlers.getCache()).entries).toMatchObject([
        { name: 'Pi OS with cloud-init', complete: true },
      ]);
    } finally {
      await server.close();
    }
  });

  it('a whole drive is copied onto another (a clone): refused as its own target, and the target holds it bit for bit; the system disk is never a source', async () => {
    const dir = scratchDir();
    const source = createLoop({ size: 16 * MiB, dir });
    const target = createLoop({ size: 24 * MiB, dir });
    const h = await harness(dir);
    const info = value(await h.service.handlers.chooseSourceDrive(source.path));
    expect(info).toMatchObject({ origin: 'drive', source: source.path, size: 16 * MiB, sizeExact: true });
    const listed = await drives(h.service);
    expect(listed.find((d) => d.device === source.path)?.verdicts.map((v) => v.kind)).toContain('source');
    expect(await h.service.handlers.startFlash({ image: source.path, targets: [source.path] })).toMatchObject({
      ok: false,
      error: {
        code: 'target-is-source',
        message: `${source.path} is the drive being copied; choose another drive to write to.`,
      },
    });

    value(await h.service.handlers.startFlash({ image: source.path, targets: [target.path] }));
    const end = await flashEnded(h);
    expect(end.results).toMatchObject([{ status: 'ok', target: target.path, bytes: 16 * MiB, verified: true }]);
    execFileSync('cmp', ['-n', String(16 * MiB), source.path, target.path]);

    const system = listed.find((d) => d.verdicts.some((v) => v.kind === 'system' && v.running));
    expect(system).toBeDefined();
    expect(await h.service.handlers.chooseSourceDrive(system?.device ?? '')).toMatchObject({
      ok: false,
      error: { code: 'target-system', message: expect.stringContaining('holds the running system') as unknown },
    });
    expect(await h.service.handlers.chooseSourceDrive('/dev/sluice-no-such-drive')).toMatchObject({
      ok: false,
      error: { code: 'unknown-drive' },
    });
  });

  it('an image Sluice cannot write is refused when chosen, with what is wrong', async () => {
    const dir = scratchDir();
    writeFileSync(join(dir, 'readme.txt'), 'not an image\n');
    sh(dir, 'zip -q archive.zip readme.txt');
    const { service } = await harness(dir);
    const result = await service.handlers.selectImage(join(dir, 'archive.zip'));
    expect(result).toMatchObject({
      ok: false,
      error: { code: 'source-corrupt', message: expect.stringContaining('archive.zip holds no disk image') as unknown },
    });
  });

  it('refuses an image that changed on disk after it was chosen', async () => {
    const dir = scratchDir();
    const image = join(dir, 'image.img');
    writeRandomFile(image, 2 * MiB);
    const loop = createLoop({ size: 4 * MiB, dir });
    const { service } = await harness(dir);
    value(await service.handlers.selectImage(image));
    appendFileSync(image, 'more');
    const result = await service.handlers.startFlash({ image: image, targets: [loop.path] });
    expect(result).toMatchObject({ ok: false, error: { code: 'image-changed' } });
  });

  it('flashes a loop device through the helper: progress events, a verified end, the desktop effects in order', async () => {
    const dir = scratchDir();
    const image = join(dir, 'image.img');
    writeRandomFile(image, 24 * MiB + 512);
    const loop = createLoop({ size: 32 * MiB, dir });
    const h = await harness(dir);
    value(await h.service.handlers.selectImage(image));
    value(await h.service.handlers.startFlash({ image: image, targets: [loop.path] }));
    expect(await h.service.handlers.startFlash({ image: image, targets: [loop.path] })).toMatchObject({
      ok: false,
      error: { code: 'busy' },
    });
    expect(await h.service.handlers.selectImage(image)).toMatchObject({ ok: false, error: { code: 'busy' } });

    const end = await flashEnded(h);
    expect(end.results).toMatchObject([{ status: 'ok', target: loop.path, bytes: 24 * MiB + 512, verified: true }]);
    expect(end.verify).toBe(true);
    expect(new Set(h.events.jobProgress.map((p) => p.phase))).toEqual(new Set(['writing', 'syncing', 'verifying']));
    execFileSync('cmp', ['-n', String(24 * MiB + 512), image, loop.path]);

    // Kept awake first, progress while writing, then cleared, notified, and allowed to sleep again.
    expect(h.effects[0]).toBe('sleep blocked');
    expect(h.effects.filter((e) => e === 'progress').length).toBeGreaterThan(0);
    expect(h.effects.slice(h.effects.indexOf('notified: Flash complete'))).toEqual([
      'notified: Flash complete',
      'sleep allowed',
      'progress cleared',
    ]);
    // Ejecting is on by default and asked of the helper; a loop device has no hardware to power off, and that is no warning.
    expect(end.results[0]).toMatchObject({ ejected: false });
    expect(end.results[0]).not.toHaveProperty('warnings');
    // The capacity check is on by default: its markers went past the image and came back.
    expect(end.results[0]).toMatchObject({ capacityCheck: { markers: expect.any(Number) as number } });
    expect(h.service.runningJob()).toBeNull();
  });

  it('with notifications off, nothing is notified; with verification off, the result says so; with ejecting or the capacity check off, neither is done', async () => {
    const dir = scratchDir();
    const image = join(dir, 'image.img');
    writeRandomFile(image, 4 * MiB);
    const loop = createLoop({ size: 8 * MiB, dir });
    const h = await harness(dir, { notifications: false, verify: false, eject: false, capacityCheck: false });
    value(await h.service.handlers.selectImage(image));
    value(await h.service.handlers.startFlash({ image: image, targets: [loop.path] }));
    const end = await flashEnded(h);
    expect(end).toMatchObject({ verify: false, results: [{ status: 'ok', verified: false }] });
    expect(end.results[0]).not.toHaveProperty('ejected');
    expect(end.results[0]).not.toHaveProperty('capacityCheck');
    expect(h.effects.some((e) => e.startsWith('notified'))).toBe(false);
  });

  it('an image the system hands over waits for the page, is chosen as a dropped file is, and is refused while a flash runs', async () => {
    const dir = scratchDir();
    const image = join(dir, 'image.img');
    writeRandomFile(image, 8 * MiB);
    writeRandomFile(join(dir, 'other.img'), MiB);
    const loop = createLoop({ size: 16 * MiB, dir });
    const h = await harness(dir);
    // Started by a double-click in a Linux file manager: the AppImage's switch, the desktop file's %U URL.
    h.handOff.openCommandLine(['/tmp/.mount_Sluice/sluice', '--no-sandbox', pathToFileURL(image).href], '/home/user');
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(h.events.imageOpened).toEqual([]);

    value(await h.service.invoke('pageReady', []));
    await expect.poll(() => h.events.imageOpened.length).toBe(1);
    expect(h.events.imageOpened[0]).toMatchObject({
      ok: true,
      value: { source: image, name: 'image.img', format: 'raw' },
    });
    // Chosen in the core, not only on the page: a flash of it starts.
    value(await h.service.handlers.startFlash({ image: image, targets: [loop.path] }));

    // A second instance started in the image's folder with a relative path, mid-flash.
    h.handOff.openCommandLine(['/usr/bin/sluice', 'other.img'], dir);
    await expect.poll(() => h.events.imageOpened.length).toBe(2);
    expect(h.events.imageOpened[1]).toMatchObject({
      ok: false,
      error: {
        code: 'busy',
        message: expect.stringMatching(/^other\.img was not opened: a flash is running/) as unknown,
      },
    });
    const end = await flashEnded(h);
    expect(end.results).toMatchObject([{ status: 'ok', target: loop.path, verified: true }]);
    execFileSync('cmp', ['-n', String(8 * MiB), image, loop.path]);
    // The core still holds image.img: a request for other.img is not the chosen image.
    expect(
      await h.service.handlers.startFlash({
        image: join(dir, 'other.img'),
        targets: [loop.path],
      }),
    ).toMatchObject({ ok: false, error: { code: 'no-image' } });

    // After the flash it opens; a file that is not there is said so.
    h.handOff.openCommandLine(['/usr/bin/sluice', 'other.img'], dir);
    await expect.poll(() => h.events.imageOpened.length).toBe(3);
    h.handOff.openFile(join(dir, 'missing.img'));
    await expect.poll(() => h.events.imageOpened.length).toBe(4);
    expect(h.events.imageOpened.slice(2)).toMatchObject([
      { ok: true, value: { source: join(dir, 'other.img') } },
      { ok: false, error: { code: 'source-not-found', message: `${join(dir, 'missing.img')}: no such file.` } },
    ]);
  });

  describe('"Back up this drive"', () => {
    it('saves the drive into the file the save dialog returned (zstd), which decodes to the drive bit for bit, with the desktop effects of a flash', async () => {
      const dir = scratchDir();
      const source = await partitionedLoop('label: dos\n1M,4M,c\n,,83\n', 16 * MiB);
      const h = await harness(dir);
      const file = join(dir, 'card.img.zst');
      const request = { device: source.path, file, compress: 'zstd', trimToPartitions: false } as const;
      // Only the file the user chose in the dialog, for that drive, is ever written.
      expect(await h.service.handlers.startBackup(request)).toMatchObject({
        ok: false,
        error: { code: 'no-backup-file' },
      });
      expect(await h.service.handlers.showBackupFile()).toMatchObject({ ok: false, error: { code: 'no-backup-file' } });
      h.saveAs = null;
      expect(value(await h.service.handlers.chooseBackupFile(source.path, 'zstd'))).toBeNull();
      expect(await h.service.handlers.startBackup(request)).toMatchObject({
        ok: false,
        error: { code: 'no-backup-file' },
      });
      h.saveAs = file;
      expect(value(await h.service.handlers.chooseBackupFile(source.path, 'zstd'))).toBe(file);
      expect(h.suggestedNames.at(-1)).toMatch(/-\d{4}-\d{2}-\d{2}\.img\.zst$/);
      expect(await h.service.handlers.startBackup({ ...request, file: join(dir, 'elsewhere.img') })).toMatchObject({
        ok: false,
        error: { code: 'no-backup-file' },
      });

      value(await h.service.handlers.startBackup(request));
      expect(h.service.runningJob()).toBe('backup');
      expect(await h.service.handlers.startBackup(request)).toMatchObject({ ok: false, error: { code: 'busy' } });
      expect(await h.service.handlers.chooseSourceDrive(source.path)).toMatchObject({
        ok: false,
        error: { code: 'busy', message: expect.stringContaining('was not opened: a backup is running') as unknown },
      });

      const end = await flashEnded(h);
      expect(end).toMatchObject({
        kind: 'backup',
        verify: true,
        results: [{ status: 'ok', target: file, bytes: 16 * MiB, written: true, verified: true }],
      });
      expect(new Set(h.events.jobProgress.map((p) => p.target))).toEqual(new Set([file]));
      expect(new Set(h.events.jobProgress.map((p) => p.phase))).toEqual(new Set(['reading', 'syncing', 'verifying']));
      expect(execFileSync('zstd', ['-dc', file], { maxBuffer: 32 * MiB }).equals(readFileSync(source.backing))).toBe(
        true,
      );
      expect(existsSync(`${file}.incomplete`)).toBe(false);
      expect(h.effects[0]).toBe('sleep blocked');
      expect(h.effects.filter((e) => e === 'progress').length).toBeGreaterThan(0);
      expect(h.effects.slice(h.effects.indexOf('notified: Backup complete'))).toEqual([
        'notified: Backup complete',
        'sleep allowed',
        'progress cleared',
      ]);
      expect(h.service.runningJob()).toBeNull();
      // "Show in folder" opens the saved file, and only that.
      value(await h.service.handlers.showBackupFile());
      expect(h.shown).toEqual([file]);
      // The dialog's answer was for one backup: another needs the dialog again.
      expect(await h.service.handlers.startBackup(request)).toMatchObject({
        ok: false,
        error: { code: 'no-backup-file' },
      });
    });

    it('stops only after the last partition when asked, and refuses the running system before any dialog opens', async () => {
      const dir = scratchDir();
      const source = await partitionedLoop('label: dos\n1M,4M,c\n,6M,83\n', 24 * MiB);
      const h = await harness(dir);
      h.saveAs = join(dir, 'trimmed.img');
      value(await h.service.handlers.chooseBackupFile(source.path, null));
      value(
        await h.service.handlers.startBackup({
          device: source.path,
          file: h.saveAs,
          compress: null,
          trimToPartitions: true,
        }),
      );
      const end = await flashEnded(h);
      expect(end.results).toMatchObject([{ status: 'ok', target: h.saveAs, bytes: 11 * MiB, verified: true }]);
      expect(readFileSync(h.saveAs).equals(readBytes(source.backing, 0, 11 * MiB))).toBe(true);

      const system = (await drives(h.service)).find((d) => d.system === 'running');
      expect(system).toBeDefined();
      const asked = h.suggestedNames.length;
      expect(await h.service.handlers.chooseBackupFile(system?.device ?? '', 'zstd')).toMatchObject({
        ok: false,
        error: { code: 'target-system', message: expect.stringContaining('holds the running system') as unknown },
      });
      expect(await h.service.handlers.chooseBackupFile('/dev/sluice-no-such-drive', 'zstd')).toMatchObject({
        ok: false,
        error: { code: 'unknown-drive' },
      });
      expect(h.suggestedNames.length).toBe(asked);
    });

    it('a Cancel that arrives while the backup is still being checked is kept: the backup ends cancelled, nothing is saved', async () => {
      const dir = scratchDir();
      const source = createLoop({ size: 16 * MiB, dir });
      const h = await harness(dir);
      h.saveAs = join(dir, 'never.img');
      value(await h.service.handlers.chooseBackupFile(source.path, null));
      const starting = h.service.handlers.startBackup({
        device: source.path,
        file: h.saveAs,
        compress: null,
        trimToPartitions: false,
      });
      // The page's progress screen has a Cancel button before the job exists.
      value(await h.service.handlers.cancelJob());
      value(await starting);
      const end = await flashEnded(h);
      expect(end.results, JSON.stringify(end.results)).toMatchObject([{ status: 'cancelled' }]);
      expect(h.effects).toContain('notified: Backup cancelled');
      expect(existsSync(h.saveAs)).toBe(false);
      expect(existsSync(`${h.saveAs}.incomplete`)).toBe(false);
    });

    it('a card swapped in the same reader after the save dialog is not backed up: another size is another drive', async () => {
      const dir = scratchDir();
      const source = createLoop({ size: 8 * MiB, dir });
      const h = await harness(dir);
      h.saveAs = join(dir, 'swapped.img');
      value(await h.service.handlers.chooseBackupFile(source.path, null));
      execFileSync('truncate', ['-s', String(12 * MiB), source.backing]);
      execFileSync('losetup', ['--set-capacity', source.path]);
      await expect
        .poll(async () => (await drives(h.service)).find((d) => d.device === source.path)?.size, { timeout: 10_000 })
        .toBe(12 * MiB);
      expect(
        await h.service.handlers.startBackup({
          device: source.path,
          file: h.saveAs,
          compress: null,
          trimToPartitions: false,
        }),
      ).toMatchObject({
        ok: false,
        error: {
          code: 'unknown-drive',
          message: expect.stringContaining('is not the drive that was chosen') as unknown,
        },
      });
      expect(existsSync(h.saveAs)).toBe(false);
    });

    it('cancelled mid-way, ends as cancelled (never success), deletes the partial file and leaves the drive as it was', async () => {
      const { loop, group } = slowSourceDrive();
      try {
        const dir = scratchDir();
        const before = digestFile(loop.backing);
        const h = await harness(dir, {}, group.dir);
        h.saveAs = join(dir, 'slow.img');
        value(await h.service.handlers.chooseBackupFile(loop.path, null));
        value(
          await h.service.handlers.startBackup({
            device: loop.path,
            file: h.saveAs,
            compress: null,
            trimToPartitions: false,
          }),
        );
        await expect
          .poll(() => h.events.jobProgress.some((p) => p.phase === 'reading' && p.bytesDone >= 4 * MiB), {
            timeout: 20_000,
          })
          .toBe(true);
        value(await h.service.handlers.cancelJob());
        const end = await flashEnded(h);
        expect(end.results).toMatchObject([{ status: 'cancelled', target: h.saveAs }]);
        expect(h.effects).toContain('notified: Backup cancelled');
        expect(existsSync(h.saveAs)).toBe(false);
        expect(existsSync(`${h.saveAs}.incomplete`)).toBe(false);
        expect(digestFile(loop.backing)).toBe(before);
      } finally {
        group.remove();
      }
    });
  });
});
