/**
 * Choosing an internal disk by typing its name, in Chromium. This machine has no internal disk
 * but the one it runs from (refused outright: see app.test.ts), and none can be made without
 * kernel modules. So the built renderer gets drivelist's captured Windows listing
 * (test/fixtures/drivelist), judged by the main process's own code, through a stand-in for
 * window.sluice that answers with it and records what the page asks for; the start request the
 * page sends then goes through the core's own refusal check. On top of app.test.ts, not instead.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiResult } from '../../common/contracts/api-result.js';
import type { SluiceApi } from '../../common/contracts/ipc-contract.js';
import type { ImageInfo } from '../../common/domain/image.js';
import type { DriveConfirmation, DriveInfo, FlashRequest } from '../../common/contracts/app-models.js';
import { typedName } from '../../common/app/typed-name.js';
import { DEFAULT_SETTINGS, type Settings } from '../../common/contracts/settings.js';
import { judgeDrives, targetRefusal } from '../../electron/core/drive-view.js';
import type { ProbedImage } from '../../electron/core/image-probe.js';
import { rendererHeaders, resolveRendererFile } from '../../electron/core/renderer-files.js';
import { rawImageInfo } from '../support/image-fixtures.js';
import { win32Drives } from '../support/drive-fixtures.js';
import { ARTIFACTS, launchBrowser } from './app-harness.js';

const ORIGIN = 'http://sluice.test';
const INTERNAL = '\\\\.\\PhysicalDrive5';
const RUNNING = '\\\\.\\PhysicalDrive0';

const image: ImageInfo = rawImageInfo('C:\\Users\\me\\raspios.img', 2e9, {
  partitionTable: { type: 'mbr', partitions: [] },
});
const drives = judgeDrives(win32Drives, {
  info: image,
  local: { realPath: image.source },
  source: { kind: 'image' },
} as ProbedImage);

interface Fixture {
  settings: Settings;
  image: ImageInfo;
  drives: DriveInfo[];
}

/**
 * Runs in the page before the renderer: window.sluice answering from the fixture, recording start
 * requests in window.startRequests and typed names in window.confirmations, each judged by the
 * core's rule (the typed name of the drive; the core itself is tested in app-service.device.test.ts).
 */
function installStandIn(fixture: Fixture): void {
  const startRequests: FlashRequest[] = [];
  const confirmations: DriveConfirmation[] = [];
  const ok = <T>(value: T): Promise<ApiResult<T>> => Promise.resolve({ ok: true, value });
  const never = () => () => undefined;
  const api: SluiceApi = {
    getSettings: () => ok(fixture.settings),
    updateSettings: () => ok(fixture.settings),
    chooseImage: () => ok(fixture.image),
    selectImage: () => ok(fixture.image),
    openImageUrl: () => ok(fixture.image),
    chooseSourceDrive: () => ok(fixture.image),
    clearImage: () => ok(null),
    readCatalogue: (source) => ok({ source, boards: [], items: [], notes: [], offline: null, cached: [] }),
    chooseCatalogueOs: () => ok(fixture.image),
    getCache: () => ok({ dir: '', limitBytes: 0, entries: [] }),
    clearCache: () => ok({ dir: '', limitBytes: 0, entries: [] }),
    listDrives: () => ok(fixture.drives),
    confirmDrive: (confirmation) => {
      confirmations.push(confirmation);
      return ok(null);
    },
    startFlash: (request) => {
      startRequests.push(request);
      return ok(null);
    },
    chooseBackupFile: () => ok(null),
    startBackup: () => ok(null),
    showBackupFile: () => ok(null),
    startCheck: () => ok(null),
    startErase: () => ok(null),
    chooseCompareImage: () => ok(null),
    startCompare: () => ok(null),
    cancelJob: () => ok(null),
    openExternal: () => ok(null),
    pageReady: () => ok(null),
    sealCustomisation: (draft) => ok(draft.profile),
    previewCustomisation: () => ok({ method: 'systemd-firstrun', why: '', files: [], hostnames: [] }),
    listSshKeys: () => ok([]),
    armStation: () => Promise.reject(new Error('no station in this test')),
    stopStation: () => Promise.reject(new Error('no station in this test')),
    exportStationLog: () => Promise.reject(new Error('no station in this test')),
    pathForFile: () => '',
    onDrivesChanged: never,
    onJobProgress: never,
    onJobEnd: never,
    onImageOpened: never,
    onDownload: never,
    onStationRow: never,
    onStationStatus: never,
  };
  Object.defineProperty(globalThis, 'sluice', { value: api });
  Object.defineProperty(globalThis, 'startRequests', { value: startRequests });
  Object.defineProperty(globalThis, 'confirmations', { value: confirmations });
}

let browser: Awaited<ReturnType<typeof launchBrowser>>;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser.close();
});

/** A page of the built renderer, with the headers (and CSP) the app serves it with, over the stand-in. */
async function standInPage(): Promise<Awaited<ReturnType<typeof browser.context.newPage>>> {
  const page = await browser.context.newPage();
  const uiDir = resolve('out/ui');
  await page.route(`${ORIGIN}/**`, (route) => {
    const file = resolveRendererFile(uiDir, new URL(route.request().url()).pathname);
    return file === null
      ? route.fulfill({ status: 404 })
      : route.fulfill({ status: 200, headers: rendererHeaders(file.contentType), body: readFileSync(file.path) });
  });
  await page.addInitScript(installStandIn, { settings: { ...DEFAULT_SETTINGS }, image, drives } satisfies Fixture);
  return page;
}

describe('an internal disk in the drive picker', () => {
  it('is chosen only after its name is typed, which the page sends to the core before the start request', async () => {
    const page = await standInPage();
    try {
      await page.goto(`${ORIGIN}/index.html`);
      await page.getByRole('button', { name: 'Choose image…' }).click();
      await page.getByTestId('image-name').waitFor();
      await page.getByRole('button', { name: 'Select target…' }).click();
      const picker = page.getByRole('dialog', { name: 'Select target drives' });
      const internal = picker.locator('li.drive-row').filter({ hasText: 'ST2000DM008' });
      const running = picker.locator('li.drive-row').filter({ hasText: 'Samsung SSD 970' });
      await expect(internal.count()).resolves.toBe(0);

      await picker.getByRole('checkbox', { name: /Show all drives/ }).check();
      await expect(running.getByRole('checkbox').isDisabled()).resolves.toBe(true);
      await expect(running.textContent()).resolves.toContain('holds the running system');
      // Ticking it asks for the name instead of choosing it.
      await internal.getByRole('checkbox').click();
      const typed = internal.getByRole('textbox');
      await typed.waitFor();
      await expect(internal.getByRole('checkbox').isChecked()).resolves.toBe(false);
      const choose = internal.getByRole('button', { name: 'Choose PhysicalDrive5' });
      await typed.fill('PhysicalDrive');
      await expect(choose.isDisabled()).resolves.toBe(true);
      await typed.fill('PhysicalDrive5');
      await page.screenshot({ path: join(ARTIFACTS, '22-internal-disk-typed-name.png') });
      await choose.click();
      await expect(internal.getByRole('checkbox').isChecked()).resolves.toBe(true);
      await picker.getByRole('button', { name: 'Select 1 drive' }).click();

      await page.getByRole('button', { name: 'Flash!' }).click();
      const confirm = page.getByRole('dialog', { name: 'Erase this drive?' });
      // The 2 TB disk's "large" verdict, in its own words.
      await expect(confirm.textContent()).resolves.toContain('more than SD cards and USB sticks usually do');
      await confirm.getByRole('button', { name: 'Erase and flash' }).click();

      const sent = await page.evaluate(() => {
        const page = globalThis as unknown as { startRequests: FlashRequest[]; confirmations: DriveConfirmation[] };
        return { requests: page.startRequests, confirmations: page.confirmations };
      });
      expect(sent.confirmations).toEqual([{ device: INTERNAL, medium: null, typed: 'PhysicalDrive5' }]);
      expect(sent.requests).toEqual([{ image: image.source, targets: [INTERNAL], media: [null], customise: null }]);
      const disk = drives.find((d) => d.device === INTERNAL);
      if (disk === undefined) throw new Error('the fixture lost its internal disk');
      expect(typedName(INTERNAL)).toBe('PhysicalDrive5');
      expect(targetRefusal(disk, false)?.code).toBe('target-system');
      expect(drives.find((d) => d.device === RUNNING)?.verdicts.map((v) => v.kind)).toContain('source');
    } finally {
      await page.close();
    }
  });

  it('is backed up only after its name is typed, as the command line asks at the terminal', async () => {
    const page = await standInPage();
    try {
      await page.goto(`${ORIGIN}/index.html`);
      await page.getByRole('button', { name: 'Select target…' }).click();
      const picker = page.getByRole('dialog', { name: 'Select target drives' });
      await picker.getByRole('checkbox', { name: /Show all drives/ }).check();
      const internal = picker.locator('li.drive-row').filter({ hasText: 'ST2000DM008' });
      await internal.getByRole('button', { name: /^Back up / }).click();
      const dialog = page.getByRole('dialog', { name: 'Back up this drive' });
      const save = dialog.getByRole('button', { name: 'Choose where to save…' });
      await expect(save.isDisabled()).resolves.toBe(true);
      const typed = dialog.getByRole('textbox');
      await typed.fill('PhysicalDrive');
      const backUp = dialog.getByRole('button', { name: 'Back up PhysicalDrive5' });
      await expect(backUp.isDisabled()).resolves.toBe(true);
      await typed.fill('PhysicalDrive5');
      await page.screenshot({ path: join(ARTIFACTS, '22b-internal-disk-backup-typed-name.png') });
      await backUp.click();
      await expect.poll(() => save.isDisabled()).toBe(false);
      const confirmations = await page.evaluate(
        () => (globalThis as unknown as { confirmations: DriveConfirmation[] }).confirmations,
      );
      expect(confirmations).toEqual([{ device: INTERNAL, medium: null, typed: 'PhysicalDrive5' }]);
    } finally {
      await page.close();
    }
  });
});
