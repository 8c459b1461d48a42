/**
 * "Choose OS" in the app, in Chromium against the real core and helper: the catalogue served on
 * 127.0.0.1 (test/support/catalogue.ts) with its boards, nested subitems_url documents, icons and
 * a malformed entry; an entry flashed while it downloads (its connection cut at 40% and resumed),
 * kept in the image cache, then flashed again with the server stopped, from the cache, with the
 * list from its saved copy marked offline; the cache listed and cleared in the settings.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DEFAULT_REPOSITORY } from '../../common/domain/catalogue.js';
import { MiB } from '../../common/domain/units.js';
import { IMAGE_SIZE, serveCatalogue, type CatalogueServer, type TestImage } from '../support/catalogue.js';
import { differencesOutside, imageFreeSpace } from '../support/free-space.js';
import { describeDevices } from '../support/device-suite.js';
import { createLoop, readBytes, scratchDir, type LoopDevice } from '../support/loop-device.js';
import { sh } from '../support/os-image.js';
import {
  chooseDrive,
  endScreen,
  flashAfterConfirming,
  launchBrowser,
  openApp,
  type AppUnderTest,
} from './app-harness.js';

/*
 * The DOM global the in-page callback below uses. This project type-checks against Node's globals;
 * Playwright serialises the callback and runs it in the page.
 */
declare class HTMLImageElement {
  readonly naturalWidth: number;
}

let browser: Awaited<ReturnType<typeof launchBrowser>> | undefined;
let context: BrowserContext;
let dir: string;
let server: CatalogueServer;
let loop: LoopDevice;

function picker(page: Page) {
  return page.getByRole('dialog', { name: 'Choose OS' });
}

function entry(page: Page, name: string) {
  return picker(page).getByTestId('os-entry').filter({ hasText: name });
}

function category(page: Page, name: string) {
  return picker(page).getByTestId('os-category').filter({ hasText: name });
}

/** The card holds `image` under the free-space rule (the default): every byte outside the image's free space is the image's. */
async function expectOnCard(image: TestImage): Promise<void> {
  expect(
    differencesOutside(
      readBytes(loop.backing, 0, IMAGE_SIZE),
      readFileSync(image.raw),
      await imageFreeSpace(image.raw, scratchDir()),
    ),
  ).toEqual([]);
}

async function flashAndCompare(app: AppUnderTest, image: TestImage): Promise<void> {
  await chooseDrive(app.page, loop.path);
  await flashAfterConfirming(app, loop.path);
  await endScreen(app.page, 'success').waitFor({ timeout: 60_000 });
  await expectOnCard(image);
}

describeDevices('Choose OS: the catalogue and the image cache in the app', () => {
  beforeAll(async () => {
    browser = await launchBrowser();
    context = browser.context;
    dir = scratchDir();
    server = await serveCatalogue(dir);
    loop = createLoop({ size: IMAGE_SIZE + 4 * MiB, dir });
    // A resumed download waits 50 ms between tries here, not a real network's seconds.
    process.env['SLUICE_RETRY_PAUSE_MS'] = '50';
  });
  afterAll(async () => {
    delete process.env['SLUICE_RETRY_PAUSE_MS'];
    await server.close();
    await browser?.close();
  });

  it('lists, filters by board, searches, flashes an entry resumed after a cut at 40%, then again offline from the cache', async () => {
    const desktop = server.images.desktop;
    const app = await openApp(context, { dropDir: dir, settings: { showVirtual: true, repositories: [server.top] } });
    try {
      const { page } = app;
      await page.getByRole('button', { name: 'Choose OS…' }).click();
      await entry(page, 'Test OS Lite').waitFor();
      await expect(category(page, 'Other systems').isVisible()).resolves.toBe(true);
      await expect(category(page, 'Generic').isVisible()).resolves.toBe(true);
      // The malformed entry and the board without tags are left out, and said so.
      await expect(entry(page, 'Broken entry').count()).resolves.toBe(0);
      await expect(picker(page).getByTestId('catalogue-notes').textContent()).resolves.toContain(
        '2 entries were skipped',
      );
      // Icons come from the app's own origin, and are real images.
      const icon = entry(page, 'Test OS Lite').locator('img');
      await expect(icon.getAttribute('src')).resolves.toMatch(/^\/catalogue-icon\/[0-9a-f]{64}$/);
      await expect(icon.evaluate((img) => (img as unknown as HTMLImageElement).naturalWidth)).resolves.toBe(1);
      await expect(picker(page).textContent()).resolves.toContain(`Released 2026-11-19`);

      // Board B (inclusive): not Lite (board-a only); the generic entry (no boards named) stays.
      await picker(page).getByRole('combobox', { name: 'Board' }).selectOption('Board B');
      await expect(entry(page, 'Test OS Lite').count()).resolves.toBe(0);
      await category(page, 'Generic').click();
      await entry(page, 'Test OS Generic').waitFor();
      await picker(page).getByRole('button', { name: 'All', exact: true }).click();
      // Its entries in another document, read when opened; one more level down in a third.
      await category(page, 'Other systems').click();
      await entry(page, 'Test OS Desktop').waitFor();
      await category(page, 'Rescue').waitFor();
      await app.screenshot('catalogue-picker');
      // Board A (exclusive): Desktop names board-a-64, one of its tags; Rescue's document is not read yet, so it stays.
      await picker(page).getByRole('combobox', { name: 'Board' }).selectOption('Board A');
      await entry(page, 'Test OS Desktop').waitFor();
      await expect(category(page, 'Rescue').count()).resolves.toBe(1);
      await picker(page).getByRole('combobox', { name: 'Board' }).selectOption('');

      // A search reads the documents not opened yet, and says where each entry is.
      const rescueReads = server.requestsFor('/lists/rescue.json');
      await picker(page).getByRole('searchbox', { name: 'Search by name' }).fill('rescue');
      await expect(entry(page, 'Test OS Rescue').textContent()).resolves.toContain('Other systems › Rescue');
      expect(server.requestsFor('/lists/rescue.json') - rescueReads).toBe(1);
      await picker(page).getByRole('searchbox', { name: 'Search by name' }).fill('');
      // Read now, Rescue's category holds nothing for Board A.
      await picker(page).getByRole('combobox', { name: 'Board' }).selectOption('Board A');
      await entry(page, 'Test OS Desktop').waitFor();
      await expect(category(page, 'Rescue').count()).resolves.toBe(0);
      await picker(page).getByRole('combobox', { name: 'Board' }).selectOption('');

      await entry(page, 'Test OS Desktop').click();
      await expect(page.getByTestId('image-name').textContent()).resolves.toBe('Test OS Desktop');
      await expect(page.getByTestId('image-checksum').textContent()).resolves.toContain('image_download_sha256');

      // The download drops at 40% of the file; the flash goes on from where it was. (The flash's
      // probe of the first bytes and its download are both whole-file answers: each is cut.)
      sh(dir, `dd if=/dev/urandom of=${loop.backing} bs=1M count=${IMAGE_SIZE / MiB} conv=notrunc status=none`);
      const rangesBefore = server.rangesFor(desktop.path).length;
      server.cutNext(desktop.path, 0.4, 2);
      // A 4 MB/s network, slower than the loop device: the download shows apart from the writing, and says it resumed.
      server.pace(desktop.path, 4_000_000);
      await chooseDrive(page, loop.path);
      await flashAfterConfirming(app, loop.path);
      // The writer waits for the download, and the screen says so: the phase is the download's, and why.
      // Both are read from one report, in one look at the screen.
      const limitedByDownload = page.getByTestId('limit').filter({
        hasText: /^Speed limited by the download: the drive waited for the image's next bytes \d+% of the time$/,
      });
      await page
        .locator('[data-screen="flashing"]')
        .filter({ has: limitedByDownload })
        .filter({ has: page.getByTestId('phase').filter({ hasText: 'Downloading…' }) })
        .waitFor({ timeout: 30_000 });
      await page
        .getByTestId('download')
        .filter({ hasText: /^Download: .* of 5\.\d MB · .*\/s · The download broke off at byte \d+/ })
        .waitFor({ timeout: 30_000 });
      await app.screenshot('catalogue-download');
      await endScreen(page, 'success').waitFor({ timeout: 60_000 });
      await expectOnCard(desktop);
      server.pace(desktop.path, null);
      const cutAt = Math.floor(desktop.downloadSize * 0.4);
      const resumedFrom = server
        .rangesFor(desktop.path)
        .slice(rangesBefore)
        .map((range) => Number(/^bytes=(\d+)-$/.exec(range)?.[1] ?? NaN));
      // Asked again from the byte it reached (what had arrived of the cut answer), not from 0.
      expect(
        resumedFrom.some((start) => start > 0 && start <= cutAt && start > cutAt - 1 * MiB),
        JSON.stringify({ resumedFrom, cutAt }),
      ).toBe(true);
      await page.getByRole('button', { name: 'Start over' }).click();

      // Kept in the cache, by its SHA-256: marked in the list.
      await page.getByRole('button', { name: 'Choose OS…' }).click();
      await category(page, 'Other systems').click();
      await expect(entry(page, 'Test OS Desktop').textContent()).resolves.toContain('Cached');
      await expect(entry(page, 'Test OS Rescue').count()).resolves.toBe(0);
      await picker(page).getByRole('button', { name: 'Cancel' }).click();

      // No server: the list from its saved copy, marked offline; the entry flashes from the cache.
      await server.close();
      sh(dir, `dd if=/dev/urandom of=${loop.backing} bs=1M count=${IMAGE_SIZE / MiB} conv=notrunc status=none`);
      await page.getByRole('button', { name: 'Choose OS…' }).click();
      await expect(picker(page).getByTestId('catalogue-offline').textContent()).resolves.toMatch(
        /^Offline: showing the list saved on/,
      );
      await category(page, 'Other systems').click();
      await entry(page, 'Test OS Desktop').filter({ hasText: 'Cached' }).waitFor();
      await app.screenshot('catalogue-offline');
      await entry(page, 'Test OS Desktop').click();
      await expect(page.getByTestId('image-name').textContent()).resolves.toBe('Test OS Desktop');
      await flashAndCompare(app, desktop);
      await page.getByRole('button', { name: 'Start over' }).click();

      // The settings: the repository list, and the cache listed and cleared.
      await page.getByRole('button', { name: 'Settings' }).click();
      const settings = page.getByRole('dialog', { name: 'Settings' });
      await settings
        .getByTestId('cache-summary')
        .filter({ hasText: /^1 image, .* in / })
        .waitFor();
      await expect(settings.textContent()).resolves.toContain(server.top);
      await app.screenshot('catalogue-settings');
      await settings.getByRole('button', { name: 'Clear cache' }).click();
      await settings
        .getByTestId('cache-summary')
        .filter({ hasText: /^It holds no images in / })
        .waitFor();
      await settings.getByRole('button', { name: `Remove ${server.top}` }).click();
      await settings.getByRole('textbox', { name: 'Catalogue address or file' }).fill(DEFAULT_REPOSITORY);
      await settings.getByRole('button', { name: 'Add' }).click();
      await expect
        .poll(
          async () =>
            ((await app.bridge.service.invoke('getSettings', [])) as { value: { repositories: string[] } }).value
              .repositories,
        )
        .toEqual([DEFAULT_REPOSITORY]);
      expect(app.pageErrors).toEqual([]);
    } finally {
      await app.close();
    }
  });

  it('refuses to read a catalogue that is not in the settings nor named by one, and to flash an entry it has not read', async () => {
    const app = await openApp(context, {
      dropDir: join(dir),
      settings: { repositories: [join(dir, 'os_list_v4.json')] },
    });
    try {
      const service = app.bridge.service;
      await expect(service.invoke('readCatalogue', ['http://127.0.0.1:9/elsewhere.json'])).resolves.toMatchObject({
        ok: false,
        error: { code: 'invalid-request' },
      });
      await expect(
        service.invoke('chooseCatalogueOs', [join(dir, 'os_list_v4.json'), ['Test OS Lite']]),
      ).resolves.toMatchObject({ ok: false, error: { code: 'source-not-found' } });
      await expect(service.invoke('readCatalogue', [join(dir, 'os_list_v4.json')])).resolves.toMatchObject({
        ok: true,
      });
    } finally {
      await app.close();
    }
  });
});
