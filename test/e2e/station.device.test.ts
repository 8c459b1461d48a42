/**
 * The station screen (issue 19) in Chromium, against the real core, the real helper and loop
 * devices attached after arming: three rows in three phases at once (one card done, one refused
 * as too small, one being written at 1 MB/s), with a screenshot; then stopped, logged and exported.
 * The station is limited to this test's backing files as its reader slots, and every helper it
 * starts passes the test launcher's assertTestTarget first.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { SluiceApi } from '../../common/contracts/ipc-contract.js';
import type { StationLogEntry } from '../../common/domain/station.js';
import { MiB } from '../../common/domain/units.js';
import { describeDevices } from '../support/device-suite.js';
import { attachLoop, createLoop, scratchDir, writeRandomFile } from '../support/loop-device.js';
import { LAYOUT_BOOT_OFFSET, LAYOUT_IMAGE_SIZE, layoutImage } from '../support/os-image.js';
import { throttledGroup, throttleDevice } from '../support/throttle.js';
import { launchBrowser, openApp } from './app-harness.js';

let browser: Awaited<ReturnType<typeof launchBrowser>> | undefined;
let context: BrowserContext;

describeDevices('the station screen (issue 19)', () => {
  beforeAll(async () => {
    browser = await launchBrowser();
    context = browser.context;
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('shows a row per card inserted after arming, each in its own phase, and logs each one', async () => {
    const dir = scratchDir();
    const image = layoutImage(dir, 'pi-os');
    const backings = { fast: join(dir, 'fast.img'), small: join(dir, 'small.img'), slow: join(dir, 'slow.img') };
    writeRandomFile(backings.fast, LAYOUT_IMAGE_SIZE + 16 * MiB);
    writeRandomFile(backings.small, 8 * MiB);
    writeRandomFile(backings.slow, LAYOUT_IMAGE_SIZE + 16 * MiB);
    // Every helper joins this group; only the slow card gets a rule, once it exists.
    const group = throttledGroup(createLoop({ size: MiB, dir }).path, 1e12);
    // "Write every byte" on: the station's cards get it too (the CLI's station test covers the default, free space left out).
    const app = await openApp(context, {
      dropDir: dir,
      settings: { showVirtual: true, exact: true },
      cgroupDir: group.dir,
    });
    const { page } = app;
    try {
      app.bridge.answerDialog(image);
      await page.getByRole('button', { name: 'Choose image…' }).click();
      await page.getByRole('button', { name: /Flashing station/ }).click();
      await page.getByLabel(/Reader slots/).fill(Object.values(backings).join('\n'));
      await page.getByLabel('Hostname template').fill('lab-{n}');
      await page.getByRole('button', { name: 'Start station' }).click();
      await page.getByTestId('station-status').filter({ hasText: 'Armed' }).waitFor();

      // By slot: a device name may have had a row before, for a loop device another process attached and detached.
      const row = (backing: string) => page.locator(`tr[data-slot="${backing}"]`);
      const fast = attachLoop(backings.fast);
      await row(backings.fast).and(page.locator('[data-result="ok"]')).waitFor({ timeout: 30_000 });
      attachLoop(backings.small);
      await row(backings.small).and(page.locator('[data-result="refused"]')).waitFor({ timeout: 10_000 });
      const slow = attachLoop(backings.slow);
      throttleDevice(group.dir, slow.path, 1_000_000);
      await row(backings.slow).getByTestId('station-phase').filter({ hasText: 'Writing' }).waitFor({ timeout: 10_000 });
      // The slow card says what holds it back, as the flash progress does.
      await row(backings.slow)
        .getByTestId('station-speed')
        .filter({ hasText: 'limited by the drive' })
        .waitFor({ timeout: 10_000 });
      await app.screenshot('station-three-rows');

      await expect(row(backings.fast).getByTestId('station-phase').textContent()).resolves.toBe(
        'Done: insert the next card',
      );
      await expect(row(backings.fast).textContent()).resolves.toContain('lab-1');
      await expect(row(backings.small).getByTestId('station-phase').textContent()).resolves.toMatch(
        /^Refused.*too small/,
      );
      await expect(row(backings.slow).textContent()).resolves.toContain('lab-2');
      await expect(row(backings.slow).getByRole('progressbar').count()).resolves.toBe(1);
      expect(app.bridge.effects.notifications.map((n) => n.title)).toContain('Card ready: insert the next one');

      // The image under an armed station does not change, whoever asks (a drop, "Open with").
      const chosenMeanwhile = await page.evaluate(
        (path) => (globalThis as unknown as { sluice: SluiceApi }).sluice.selectImage(path),
        image,
      );
      expect(chosenMeanwhile).toMatchObject({ ok: false, error: { code: 'busy' } });

      await page.getByRole('button', { name: 'Stop station' }).click();
      await row(backings.slow).and(page.locator('[data-result="cancelled"]')).waitFor({ timeout: 30_000 });
      const log = readFileSync(join(dir, 'station-log.jsonl'), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as StationLogEntry)
        // Loop devices other processes attach meanwhile are refused as outside the slots, and logged too.
        .filter((e) => Object.values(backings).includes(e.slot));
      expect(log.map((e) => [e.slot, e.result, e.hostname])).toEqual([
        [backings.fast, 'ok', 'lab-1'],
        [backings.small, 'refused', null],
        [backings.slow, 'cancelled', 'lab-2'],
      ]);
      expect(log[0]).toMatchObject({ bytesWritten: LAYOUT_IMAGE_SIZE, bytesSkipped: 0 });
      await page.getByRole('button', { name: 'Export CSV' }).click();
      await expect.poll(() => app.bridge.shownFiles).toEqual([join(dir, 'station-log.csv')]);
      const csv = readFileSync(join(dir, 'station-log.csv'), 'utf8').split('\r\n');
      expect(csv[0]).toMatch(/^time,card,slot,/);
      for (const backing of Object.values(backings))
        expect(csv.filter((line) => line.includes(backing))).toHaveLength(1);
      const firstRun = execFileSync('mtype', ['-i', `${fast.path}@@${LAYOUT_BOOT_OFFSET}`, '::/firstrun.sh'], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      });
      expect(firstRun).toContain(`set_hostname 'lab-1'`);
      expect(app.pageErrors).toEqual([]);
    } finally {
      await app.close();
      group.remove();
    }
  }, 120_000);

  it('holds 32 cards readably: a row each, saying what limits it, and the batch line above them', async () => {
    const dir = scratchDir();
    const image = join(dir, 'image.img');
    writeRandomFile(image, 16 * MiB);
    const backings = Array.from({ length: 32 }, (_, i) => join(dir, `card-${String(i + 1).padStart(2, '0')}.img`));
    for (const backing of backings) execFileSync('truncate', ['-s', String(24 * MiB), backing]);
    const group = throttledGroup(createLoop({ size: MiB, dir }).path, 1e12);
    const app = await openApp(context, { dropDir: dir, settings: { showVirtual: true }, cgroupDir: group.dir });
    const { page } = app;
    // Only this test's cards: other processes' loop devices show as refused rows of their own.
    const ours = page.locator(`tr[data-slot^="${dir}/"]`);
    try {
      await page.setViewportSize({ width: 1280, height: 1500 });
      app.bridge.answerDialog(image);
      await page.getByRole('button', { name: 'Choose image…' }).click();
      await page.getByRole('button', { name: /Flashing station/ }).click();
      await page.getByLabel(/Reader slots/).fill(backings.join('\n'));
      await page.getByRole('button', { name: 'Start station' }).click();
      await page.getByTestId('station-status').filter({ hasText: 'Armed' }).waitFor();
      // 1 MB/s each: 16 s a card, so 16 are written at once while the other 16 wait their turn.
      for (const backing of backings) throttleDevice(group.dir, attachLoop(backing).path, 1_000_000);
      await expect.poll(() => ours.count(), { timeout: 30_000 }).toBe(32);
      await ours
        .getByTestId('station-speed')
        .filter({ hasText: 'limited by the drive' })
        .first()
        .waitFor({ timeout: 30_000 });
      await page
        .getByTestId('station-batch')
        .filter({ hasText: /cards writing: .* in all, of .* they reached each at best/ })
        .waitFor({ timeout: 30_000 });
      await expect
        .poll(() => ours.getByTestId('station-phase').filter({ hasText: 'Waiting for a free slot' }).count())
        .toBe(16);
      await app.screenshot('station-32-rows');

      await page.getByRole('button', { name: 'Stop station' }).click();
      await expect
        .poll(() => ours.and(page.locator('[data-result="cancelled"]')).count(), { timeout: 90_000 })
        .toBe(32);
      expect(app.pageErrors).toEqual([]);
    } finally {
      await app.close();
      group.remove();
    }
  }, 240_000);
});
