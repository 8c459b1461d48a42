import { execFileSync } from 'node:child_process';
import {
  closeSync,
  existsSync,
  openSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { formatBytes, MiB } from '../../common/domain/units.js';
import { assertTestTarget } from '../support/cli.js';
import { describeDevices } from '../support/device-suite.js';
import {
  attachLoop,
  createLoop,
  detachLoop,
  partitionedLoop,
  readBytes,
  scratchDir,
  smallTmpfs,
  waitForPath,
  writeRandomFile,
  type LoopDevice,
} from '../support/loop-device.js';
import { serveFiles } from '../support/file-server.js';
import { differencesOutside, imageFreeSpace } from '../support/free-space.js';
import { osImage, sh } from '../support/os-image.js';
import { rootDisk } from '../support/system-disk.js';
import { slowSourceDrive, throttledGroup } from '../support/throttle.js';
import {
  chooseDrive,
  endScreen,
  flashAfterConfirming,
  launchBrowser,
  openApp,
  recordPercents,
  type AppUnderTest,
} from './app-harness.js';

let browser: Awaited<ReturnType<typeof launchBrowser>> | undefined;
let context: BrowserContext;

/** A fresh folder holding a random image of `imageSize` bytes, and a loop device of `loopSize` bytes to write it to. */
function imageAndLoop(imageSize: number, loopSize: number, name = 'image.img') {
  const dir = scratchDir();
  const image = join(dir, name);
  writeRandomFile(image, imageSize);
  return { dir, image, loop: createLoop({ size: loopSize, dir }) };
}

/** Steps 1 to 3 for one drive: the image through the (answered) file dialog, the drive, Flash! and the erase confirmation. */
async function flashImageTo(app: AppUnderTest, image: string, device: string): Promise<void> {
  app.bridge.answerDialog(image);
  await app.page.getByRole('button', { name: 'Choose image…' }).click();
  await chooseDrive(app.page, device);
  await flashAfterConfirming(app, device);
}

/**
 * A 32 MiB random image flashed to a 48 MiB card whose reads run at 8 MB/s: writing is fast and
 * reading back takes about 4 s. `during` runs once the page shows the verifying phase; the app and
 * the throttle are cleaned up after it.
 */
async function duringSlowVerification(during: (app: AppUnderTest, loop: LoopDevice) => Promise<void>): Promise<void> {
  const { dir, image, loop } = imageAndLoop(32 * MiB, 48 * MiB);
  const group = throttledGroup(loop.path, 8 * 1000 * 1000, 'read');
  const app = await openApp(context, { dropDir: dir, settings: { showVirtual: true }, cgroupDir: group.dir });
  try {
    await flashImageTo(app, image, loop.path);
    await app.page.getByTestId('phase').filter({ hasText: 'Verifying' }).waitFor({ timeout: 30_000 });
    await during(app, loop);
  } finally {
    await app.close();
    group.remove();
  }
}

/**
 * Steps 2 and 3 for the image already chosen, to a verified end; then the drive must hold the
 * first `bytes` of `raw`. An OS image (`osImage`) leaves its filesystems' free space out: the end
 * screen says so, partition by partition, and the drive must equal the image everywhere else.
 */
async function flashChosenImageAndCompare(
  app: AppUnderTest,
  device: string,
  raw: string,
  bytes: number,
  leavesFreeSpace = false,
): Promise<void> {
  await chooseDrive(app.page, device);
  await flashAfterConfirming(app, device);
  await endScreen(app.page, 'success').waitFor({ timeout: 60_000 });
  if (!leavesFreeSpace) {
    execFileSync('cmp', ['-n', String(bytes), raw, device]);
    await expect(app.page.getByTestId('result-skipped').count()).resolves.toBe(0);
    return;
  }
  const skipped = await app.page.getByTestId('result-skipped').allTextContents();
  expect(skipped).toEqual([
    expect.stringMatching(/^\d+(\.\d)? MB of free space in BOOT \(FAT12, partition 1\) not written\.$/),
    expect.stringMatching(/^\d+(\.\d)? MB of free space in rootfs \(ext4, partition 2\) not written\.$/),
  ]);
  const image = readFileSync(raw).subarray(0, bytes);
  expect(differencesOutside(readBytes(device, 0, bytes), image, await imageFreeSpace(raw, scratchDir()))).toEqual([]);
}

/*
 * The few DOM globals the in-page callbacks below use. This project type-checks against Node's
 * globals; Playwright serialises each callback and runs it in the page, where these are real.
 */
declare const getComputedStyle: (element: unknown) => { outlineStyle: string; color: string };
declare const document: {
  activeElement: { textContent: string | null } | null;
  createElement(tag: string): { style: { color: string }; remove(): void };
  body: { append(node: unknown): void };
};
declare class DataTransfer {
  readonly items: { add(file: unknown): void };
}
declare class File {
  constructor(parts: string[], name: string);
}

const IN_PAGE = {
  dataTransferWithFile: (name: string) => {
    const transfer = new DataTransfer();
    transfer.items.add(new File(['stand-in bytes'], name));
    return transfer;
  },
  focusedText: () => document.activeElement?.textContent?.trim() ?? null,
  outlineStyle: (element: unknown) => getComputedStyle(element).outlineStyle,
  color: (element: unknown) => getComputedStyle(element).color,
  resolveColor: (value: string) => {
    const sample = document.createElement('span');
    sample.style.color = value;
    document.body.append(sample);
    const color = getComputedStyle(sample).color;
    sample.remove();
    return color;
  },
};

/** "7:3" for /dev/loop3: how blkio throttle rules name a device. */
function majorMinor(device: string): string {
  return execFileSync('lsblk', ['--nodeps', '--noheadings', '--output', 'MAJ:MIN', device], {
    encoding: 'utf8',
  }).trim();
}

async function shownPercent(page: Page): Promise<number> {
  return parseInt((await page.getByTestId('percent').textContent()) ?? '', 10) || 0;
}

/** Opens "Back up…" on the drive's row in the picker, picks the format and sets the save dialog's answer; returns the backup dialog. */
async function openBackupDialog(app: AppUnderTest, device: string, format: RegExp, file: string) {
  const { page } = app;
  await page.getByRole('button', { name: 'Select target…' }).click();
  const row = page.locator(`li[data-device="${device}"]`);
  await row.waitFor();
  await row.getByRole('button', { name: new RegExp(`^Back up .* \\(${device}\\)$`) }).click();
  const dialog = page.getByRole('dialog', { name: 'Back up this drive' });
  await dialog.waitFor();
  await expect(dialog.textContent()).resolves.toContain(device);
  await dialog.getByRole('radio', { name: format }).check();
  app.bridge.answerSaveDialog(file);
  return dialog;
}

describeDevices('the desktop app, in Chromium, against the real core and helper', () => {
  beforeAll(async () => {
    browser = await launchBrowser();
    context = browser.context;
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('chooses an image, picks the loop drive, flashes with visible progress, ends verified; the device equals the image', async () => {
    const { dir, image, loop } = imageAndLoop(48 * MiB, 64 * MiB, 'raspios-lite.img');
    // A slow card: writing takes about 2 s and reading back about 1.5 s, long enough to watch.
    const group = throttledGroup(loop.path, 24 * 1000 * 1000);
    writeFileSync(`${group.dir}/blkio.throttle.read_bps_device`, `${majorMinor(loop.path)} ${32 * 1000 * 1000}`);
    const app = await openApp(context, { dropDir: dir, settings: { showVirtual: true }, cgroupDir: group.dir });
    try {
      const { page, bridge } = app;
      await app.screenshot('01-start');

      bridge.answerDialog(image);
      await page.getByRole('button', { name: 'Choose image…' }).click();
      await expect(page.getByTestId('image-name').textContent()).resolves.toBe('raspios-lite.img');
      await expect(page.getByTestId('image-format').textContent()).resolves.toBe('Raw disk image');
      await app.screenshot('02-image-chosen');

      await page.getByRole('button', { name: 'Select target…' }).click();
      const row = page.locator(`li[data-device="${loop.path}"]`);
      await row.waitFor();
      await app.screenshot('03-drive-picker');
      await row.getByRole('checkbox').check();
      await page.getByRole('button', { name: 'Select 1 drive' }).click();
      await app.screenshot('04-ready');

      await flashAfterConfirming(app, loop.path, '05-confirm-erase');
      const success = endScreen(page, 'success').waitFor({ timeout: 60_000 });
      const percents = recordPercents(page, success);
      await page.getByTestId('phase').filter({ hasText: 'Writing' }).waitFor();
      // The card, throttled to 24 MB/s, is what the writer waits for: the screen says so, with the measure.
      await page
        .getByTestId('limit')
        .filter({
          hasText: /^Speed limited by the drive: the image's next bytes waited for the drive \d+% of the time$/,
        })
        .waitFor({ timeout: 30_000 });
      await expect.poll(() => shownPercent(page), { timeout: 30_000 }).toBeGreaterThanOrEqual(15);
      await app.screenshot('06-writing');
      await page.getByTestId('phase').filter({ hasText: 'Verifying' }).waitFor();
      await app.screenshot('07-verifying');
      await success;
      await app.screenshot('08-success');

      const seen = await percents;
      expect(seen.length).toBeGreaterThanOrEqual(5);
      expect([...seen].sort((a, b) => a - b)).toEqual(seen);
      await expect(endScreen(page, 'success').textContent()).resolves.toContain('Written and verified');

      execFileSync('cmp', ['-n', String(48 * MiB), image, loop.path]);
      // The desktop glue's part, as the core drove it: kept awake while writing, taskbar progress, one notification.
      expect(bridge.effects).toMatchObject({
        sleepBlocks: 1,
        sleepReleases: 1,
        notifications: [{ title: 'Flash complete' }],
      });
      expect(bridge.effects.progress.at(-1)).toBeNull();
      expect(bridge.effects.progress.some((f) => f !== null && f > 0.2 && f < 0.8)).toBe(true);

      await page.emulateMedia({ colorScheme: 'dark' });
      await app.screenshot('09-success-dark');
      expect(app.pageErrors).toEqual([]);
    } finally {
      await app.close();
      group.remove();
    }
  });

  // A card that corrupts a block every time, which no repair fixes, is test/e2e/card-health.device.test.ts's.
  it('a byte corrupted on the card during verification is written again from the image: the flash ends green, saying so', async () => {
    await duringSlowVerification(async (app, loop) => {
      const { page, bridge } = app;
      // Far ahead of the read-back: change one byte on the "card" behind the helper's back.
      const corruptAt = 30 * MiB + 12_345;
      const original = readBytes(loop.backing, corruptAt, 1)[0] ?? 0;
      const fd = openSync(loop.backing, 'r+');
      writeSync(fd, Buffer.from([original ^ 0x5a]), 0, 1, corruptAt);
      closeSync(fd);

      await endScreen(page, 'success').waitFor({ timeout: 30_000 });
      await expect(page.getByTestId('result-repaired').textContent()).resolves.toMatch(
        /repaired 1 block at offset \d+: written again from the image/,
      );
      await app.screenshot('10-verify-repaired');
      expect(bridge.effects.notifications).toEqual([
        { title: 'Flash complete', body: 'The drive was written and verified.' },
      ]);
      expect(readBytes(loop.backing, corruptAt, 1)[0]).toBe(original);
      expect(app.pageErrors).toEqual([]);
    });
  });

  it('cancel mid-write lands on "cancelled" within 2 s, and the drive is left without a partition table', async () => {
    const { dir, image, loop } = imageAndLoop(96 * MiB, 128 * MiB);
    const group = throttledGroup(loop.path, 20 * 1000 * 1000);
    const app = await openApp(context, { dropDir: dir, settings: { showVirtual: true }, cgroupDir: group.dir });
    try {
      const { page, bridge } = app;
      await flashImageTo(app, image, loop.path);
      await expect.poll(() => shownPercent(page), { timeout: 30_000 }).toBeGreaterThanOrEqual(5);

      const cancelledAt = performance.now();
      await page.getByRole('button', { name: 'Cancel' }).click();
      await endScreen(page, 'cancelled').waitFor({ timeout: 10_000 });
      expect((performance.now() - cancelledAt) / 1000).toBeLessThan(2);
      await app.screenshot('11-cancelled');
      await expect(page.getByRole('heading', { name: 'Flash cancelled' }).isVisible()).resolves.toBe(true);
      expect(readBytes(loop.backing, 0, MiB).every((b) => b === 0)).toBe(true);
      expect(bridge.effects).toMatchObject({ sleepBlocks: 1, sleepReleases: 1 });
    } finally {
      await app.close();
      group.remove();
    }
  });

  it('writes two drives at once, with a progress row for each, and verifies both', async () => {
    const dir = scratchDir();
    const image = join(dir, 'image.img');
    writeRandomFile(image, 24 * MiB);
    const first = createLoop({ size: 32 * MiB, dir });
    const second = createLoop({ size: 40 * MiB, dir });
    const group = throttledGroup(first.path, 16 * 1000 * 1000);
    writeFileSync(`${group.dir}/blkio.throttle.write_bps_device`, `${majorMinor(second.path)} ${16 * 1000 * 1000}`);
    const app = await openApp(context, { dropDir: dir, settings: { showVirtual: true }, cgroupDir: group.dir });
    try {
      const { page, bridge } = app;
      bridge.answerDialog(image);
      await page.getByRole('button', { name: 'Choose image…' }).click();
      await page.getByRole('button', { name: 'Select target…' }).click();
      for (const loop of [first, second]) {
        const row = page.locator(`li[data-device="${loop.path}"]`);
        await row.waitFor();
        await row.getByRole('checkbox').check();
      }
      await page.getByRole('button', { name: 'Select 2 drives' }).click();
      [first, second].forEach((loop) => assertTestTarget(loop.path));
      await page.getByRole('button', { name: 'Flash!' }).click();
      const dialog = page.getByRole('dialog', { name: 'Erase these 2 drives?' });
      await expect(dialog.textContent()).resolves.toMatch(new RegExp(`${first.path}.*${second.path}`));
      await dialog.getByRole('button', { name: 'Erase and flash' }).click();

      const rows = page.getByRole('list', { name: 'Drives' }).getByRole('listitem');
      await expect.poll(() => rows.count()).toBe(2);
      await expect.poll(() => shownPercent(page), { timeout: 30_000 }).toBeGreaterThanOrEqual(10);
      await app.screenshot('19-two-drives-writing');
      await endScreen(page, 'success').waitFor({ timeout: 60_000 });
      await expect(page.locator('li.result.ok').count()).resolves.toBe(2);
      await app.screenshot('20-two-drives-success');
      for (const loop of [first, second]) execFileSync('cmp', ['-n', String(24 * MiB), image, loop.path]);
    } finally {
      await app.close();
      group.remove();
    }
  });

  it('a problem after a verified write (a program holds an old partition open) is a warning on a green success screen', async () => {
    const dir = scratchDir();
    const image = join(dir, 'image.img');
    writeRandomFile(image, 8 * MiB);
    const backing = join(dir, 'card.img');
    writeRandomFile(backing, 16 * MiB);
    execFileSync('sfdisk', ['--quiet', backing], { input: 'label: dos\nstart=2048, type=83\n' });
    const loop = attachLoop(backing, { partitions: true });
    const partition = `${loop.path}p1`;
    await waitForPath(partition);
    assertTestTarget(partition);
    // Open, not mounted: nothing stops the write, but the kernel cannot drop the old partition afterwards.
    const holder = openSync(partition, 'r');
    const app = await openApp(context, { dropDir: dir, settings: { showVirtual: true } });
    try {
      const { page, bridge } = app;
      await flashImageTo(app, image, loop.path);

      await endScreen(page, 'success').waitFor({ timeout: 30_000 });
      await expect(page.getByTestId('result-warning').textContent()).resolves.toMatch(
        new RegExp(
          `^${loop.path} is written and verified, but the system did not pick up its new partitions .*Unplug it and plug it back in`,
        ),
      );
      await expect(page.getByRole('heading', { name: 'Flash complete' }).isVisible()).resolves.toBe(true);
      await app.screenshot('21-success-with-warning');
      expect(bridge.effects.notifications).toEqual([
        { title: 'Flash complete', body: 'The drive was written and verified.' },
      ]);
      execFileSync('cmp', ['-n', String(8 * MiB), image, loop.path]);
    } finally {
      closeSync(holder);
      await app.close();
    }
  });

  it('cancel during verification lands on "cancelled", not on success', async () => {
    await duringSlowVerification(async ({ page, bridge }) => {
      const cancelledAt = performance.now();
      await page.getByRole('button', { name: 'Cancel' }).click();
      await endScreen(page, 'cancelled').waitFor({ timeout: 10_000 });
      expect((performance.now() - cancelledAt) / 1000).toBeLessThan(2);
      expect(bridge.effects.notifications).toEqual([
        { title: 'Flash cancelled', body: expect.stringContaining('not completely written and verified') },
      ]);
    });
  });

  it('drives appear and disappear live: unplugging a chosen loop drops it from the list and from the selection', async () => {
    const dir = scratchDir();
    const app = await openApp(context, { dropDir: dir, settings: { showVirtual: true } });
    try {
      const { page } = app;
      await page.getByRole('button', { name: 'Select target…' }).click();
      const loop = createLoop({ size: 16 * MiB, dir });
      const row = page.locator(`li[data-device="${loop.path}"]`);
      await row.waitFor();
      await app.screenshot('12-hotplug-added');
      await row.getByRole('checkbox').check();
      await page.getByRole('button', { name: 'Select 1 drive' }).click();
      await expect(page.getByRole('list', { name: 'Chosen drives' }).textContent()).resolves.toContain(loop.path);

      detachLoop(loop.path);
      await page
        .getByRole('status')
        .filter({ hasText: `(${loop.path}) was removed` })
        .waitFor();
      await app.screenshot('13-hotplug-removed');
      await page.getByRole('button', { name: 'Select target…' }).click();
      await page.getByRole('dialog', { name: 'Select target drives' }).waitFor();
      // The kernel reuses a loop number at once, and the other test worker may have taken it for its
      // own loop by now: a row under this name may be there, but never the removed loop chosen.
      await expect(
        page.locator(`li[data-device="${loop.path}"]`).getByRole('checkbox', { checked: true }).count(),
      ).resolves.toBe(0);
    } finally {
      await app.close();
    }
  });

  it('virtual drives are listed only with the setting on; the running system only behind "show all", and never selectable', async () => {
    const dir = scratchDir();
    const loop = createLoop({ size: 16 * MiB, dir });
    const app = await openApp(context, { dropDir: dir });
    try {
      const { page } = app;
      await page.getByRole('button', { name: 'Select target…' }).click();
      const picker = page.getByRole('dialog', { name: 'Select target drives' });
      await picker.waitFor();
      const loopRow = picker.locator(`li[data-device="${loop.path}"]`);
      const systemRow = picker.locator(`li[data-device="${rootDisk()}"]`);
      await expect(loopRow.count()).resolves.toBe(0);
      await expect(systemRow.count()).resolves.toBe(0);

      // This machine's own disk holds the running system: listed only on request, and refused outright,
      // with no name to type. "Show all" lists virtual drives too, as `sluice list --all` does.
      const showAll = picker.getByRole('checkbox', { name: /Show all drives/ });
      await showAll.check();
      await expect(systemRow.textContent()).resolves.toMatch(/Running system.*holds the running system/);
      await expect(systemRow.getByRole('checkbox').isDisabled()).resolves.toBe(true);
      await expect(systemRow.getByRole('textbox').count()).resolves.toBe(0);
      await loopRow.waitFor();
      await systemRow.scrollIntoViewIfNeeded();
      await app.screenshot('14-running-system-refused');
      await showAll.uncheck();
      await expect(loopRow.count()).resolves.toBe(0);
      await picker.getByRole('button', { name: 'Cancel' }).click();

      await page.getByRole('button', { name: 'Settings' }).click();
      const settings = page.getByRole('dialog', { name: 'Settings' });
      await settings.getByRole('checkbox', { name: 'Show virtual drives' }).check();
      await app.screenshot('15-settings');
      await settings.getByRole('button', { name: 'Done' }).click();
      expect(JSON.parse(readFileSync(join(dir, 'settings.json'), 'utf8'))).toMatchObject({
        showVirtual: true,
        verify: true,
        eject: true,
        notifications: true,
      });
      await page.getByRole('button', { name: 'Select target…' }).click();
      await picker.locator(`li[data-device="${loop.path}"]`).waitFor();
    } finally {
      await app.close();
    }
  });

  it('an image at a web address is typed in, opened, downloaded while it is written, and the drive holds it (its free space left out, as the end screen says)', async () => {
    const dir = scratchDir();
    const raw = osImage(dir, 24 * MiB);
    sh(dir, 'zstd -q -3 os.img');
    const server = await serveFiles([`${raw}.zst`]);
    const loop = createLoop({ size: 32 * MiB, dir });
    const app = await openApp(context, { dropDir: dir, settings: { showVirtual: true } });
    try {
      const { page } = app;
      await page.getByRole('button', { name: 'Flash from URL…' }).click();
      await page.getByRole('textbox', { name: 'Image address' }).fill(`${server.base}/os.img.zst`);
      await app.screenshot('24-image-address');
      await page.getByRole('button', { name: 'Open' }).click();
      await expect.poll(() => page.getByTestId('image-name').textContent()).toBe('os.img.zst');
      await expect(page.getByTestId('image-format').textContent()).resolves.toBe('Zstandard-compressed image');
      // A compressed download's size is known only once it is decoded: the progress then counts bytes without a percentage.
      await expect(page.getByTestId('image-writes').textContent()).resolves.toBe('Known once decompressed');
      await app.screenshot('25-image-from-url');

      await flashChosenImageAndCompare(app, loop.path, raw, 24 * MiB, true);
    } finally {
      await app.close();
      await server.close();
    }
  });

  it('a drive chosen to copy is cloned onto another, which then holds it bit for bit', async () => {
    const dir = scratchDir();
    const source = createLoop({ size: 16 * MiB, dir });
    const target = createLoop({ size: 24 * MiB, dir });
    const app = await openApp(context, { dropDir: dir, settings: { showVirtual: true } });
    try {
      const { page } = app;
      await page.getByRole('button', { name: 'Clone a drive…' }).click();
      const select = page.getByRole('combobox', { name: 'Drive to copy' });
      await expect.poll(() => select.locator(`option[value="${source.path}"]`).count()).toBe(1);
      await select.selectOption(source.path);
      await app.screenshot('26-drive-to-copy');
      await page.getByRole('button', { name: 'Copy' }).click();
      await expect.poll(() => page.getByTestId('image-format').textContent()).toBe('Whole drive, copied bit for bit');
      await flashChosenImageAndCompare(app, target.path, source.path, 16 * MiB);
    } finally {
      await app.close();
    }
  });

  it('"Back up…" on a drive saves it where the save dialog says, compressed, to a verified end, and the file decodes to the drive; a disk too small for it is said so and keeps no file', async () => {
    const dir = scratchDir();
    const source = await partitionedLoop('label: dos\n1M,4M,c\n,,83\n', 24 * MiB);
    const app = await openApp(context, { dropDir: dir, settings: { showVirtual: true } });
    const { page } = app;
    try {
      const file = join(dir, 'card.img.zst');
      const dialog = await openBackupDialog(app, source.path, /^Zstandard/, file);
      await app.screenshot('27-backup-dialog');
      await dialog.getByRole('button', { name: 'Choose where to save…' }).click();
      await page.locator('section[data-screen="flashing"]').getByText('card.img.zst').first().waitFor();
      await endScreen(page, 'success').waitFor({ timeout: 60_000 });
      await expect(page.getByRole('heading', { name: 'Backup complete' }).count()).resolves.toBe(1);
      await expect(page.getByTestId('result-done').textContent()).resolves.toMatch(
        /^Saved and verified: read back and compared with what was read from the drive \(.+\)\.$/,
      );
      // Its partitions hold no filesystem Sluice reads: all of the drive is read, and its tables once more, to find that.
      const { blocks, size } = statSync(file);
      await expect(page.getByTestId('result-backup').textContent()).resolves.toMatch(
        new RegExp(
          `^Read [\\d.]+ MB of the 25\\.2 MB drive \\(including [\\d.]+ MB of tables and filesystem maps read to find what is used\\)\\. The 25\\.2 MB image compressed with zstd is a ${formatBytes(size)} file \\(${formatBytes(blocks * 512)} on disk\\)\\.$`,
        ),
      );
      await app.screenshot('28-backup-complete');
      await page.getByRole('button', { name: 'Show in folder' }).click();
      await expect.poll(() => app.bridge.shownFiles).toEqual([file]);
      expect(execFileSync('zstd', ['-dc', file], { maxBuffer: 32 * MiB }).equals(readFileSync(source.backing))).toBe(
        true,
      );
      expect(app.bridge.suggestedNames[0]).toMatch(/\.img\.zst$/);
      expect(app.bridge.effects.notifications.at(-1)).toEqual({
        title: 'Backup complete',
        body: `Saved and verified: ${file}.`,
      });
      await page.getByRole('button', { name: 'Done' }).click();
      await page.locator('[data-screen="steps"]').waitFor();

      // A name that is a link is refused when the backup starts: the backup dialog comes back and says why.
      const link = join(dir, 'link.img');
      symlinkSync(join(dir, 'elsewhere.img'), link);
      const again = await openBackupDialog(app, source.path, /^Uncompressed/, link);
      await again.getByRole('button', { name: 'Choose where to save…' }).click();
      await expect
        .poll(() =>
          again
            .getByRole('alert')
            .textContent()
            .catch(() => null),
        )
        .toMatch(/link\.img is a symbolic link/);
      await expect(page.locator('[data-screen="steps"]').getByRole('alert').count()).resolves.toBe(0);
      await again.getByRole('button', { name: 'Cancel' }).click();

      const full = join(smallTmpfs(4 * MiB), 'card.img');
      await (
        await openBackupDialog(app, source.path, /^Uncompressed/, full)
      )
        .getByRole('button', { name: 'Choose where to save…' })
        .click();
      await endScreen(page, 'failure').waitFor({ timeout: 60_000 });
      await expect(page.getByTestId('failure-headline').textContent()).resolves.toBe('Not enough space for the backup');
      await app.screenshot('29-backup-disk-full');
      expect(existsSync(full)).toBe(false);
      expect(existsSync(`${full}.incomplete`)).toBe(false);
    } finally {
      await app.close();
    }
  });

  it('"Back up…" with "Shrink to fit a smaller card": the raw file ends at the shrunk root, read back and verified', async () => {
    const dir = scratchDir('/var/tmp');
    // A root partition that runs to the drive's end, as an OS grows it on its first boot.
    const drive = attachLoop(osImage(dir, 2 * 1024 * MiB, 'drive.img', { fat32: true }));
    const app = await openApp(context, { dropDir: dir, settings: { showVirtual: true } });
    const { page } = app;
    try {
      const file = join(dir, 'shrunk.img');
      const dialog = await openBackupDialog(app, drive.path, /^Uncompressed/, file);
      await dialog.getByRole('checkbox', { name: /^Shrink to fit a smaller card/ }).check();
      await dialog.getByRole('button', { name: 'Choose where to save…' }).click();
      await endScreen(page, 'success').waitFor({ timeout: 240_000 });
      expect(statSync(file).size).toBeLessThan(1024 * MiB);
      // The shrunk root's last block lies inside the file, and the table sfdisk reads ends there too.
      const table = JSON.parse(execFileSync('sfdisk', ['--json', file], { encoding: 'utf8' })) as {
        partitiontable: { partitions: { start: number; size: number }[] };
      };
      const last = table.partitiontable.partitions.at(-1);
      expect(((last?.start ?? 0) + (last?.size ?? 0)) * 512).toBeLessThanOrEqual(statSync(file).size);
      const { blocks, size } = statSync(file);
      await expect(page.getByTestId('result-backup').textContent()).resolves.toMatch(
        new RegExp(
          `^Read [\\d.]+ [MG]B of the 2\\.1 GB drive \\(including [\\d.]+ [MG]B of tables and filesystem maps read to find what is used\\)\\. The image file is ${formatBytes(size)} long and takes ${formatBytes(blocks * 512)} on disk\\. Shrunk from 2\\.1 GB to ${formatBytes(size)}: `,
        ),
      );
    } finally {
      await app.close();
    }
  }, 300_000);

  it('a backup under way shows the file and its progress; Cancel lands on "Backup cancelled", never green, and the partial file is gone', async () => {
    const { loop, group } = slowSourceDrive();
    const dir = scratchDir();
    const app = await openApp(context, { dropDir: dir, settings: { showVirtual: true }, cgroupDir: group.dir });
    try {
      const { page } = app;
      const file = join(dir, 'slow.img');
      await (
        await openBackupDialog(app, loop.path, /^Uncompressed/, file)
      )
        .getByRole('button', { name: 'Choose where to save…' })
        .click();
      await expect.poll(() => shownPercent(page), { timeout: 30_000 }).toBeGreaterThanOrEqual(5);
      const progress = page.locator('section[data-screen="flashing"]');
      await expect(progress.getByRole('heading').textContent()).resolves.toMatch(/^Backing up .* to slow\.img$/);
      await expect(progress.getByRole('list', { name: 'Backup file' }).textContent()).resolves.toContain(file);
      await expect(page.getByTestId('phase').textContent()).resolves.toBe('Reading…');
      // Bytes read against what is to be read, the drive's size beside them; the speed is the drive's read speed.
      const [done = '', toRead = '', speed = ''] =
        /^Read ([\d.]+) MB of ([\d.]+) MB to read: the whole 67\.1 MB drive, after its tables and filesystem maps · ([\d.]+) MB\/s( · .+ left in this phase)?$/
          .exec((await page.getByTestId('progress-bytes').textContent()) ?? '')
          ?.slice(1) ?? [];
      expect(Number(done)).toBeGreaterThanOrEqual(3.3);
      expect(Number(toRead)).toBeGreaterThanOrEqual(67.1);
      expect(Number(speed)).toBeLessThan(16);
      await app.screenshot('30-backup-progress');
      await page.getByRole('button', { name: 'Cancel' }).click();
      await endScreen(page, 'cancelled').waitFor({ timeout: 10_000 });
      await expect(page.getByRole('heading', { name: 'Backup cancelled' }).isVisible()).resolves.toBe(true);
      await expect(endScreen(page, 'cancelled').textContent()).resolves.toContain(
        'The incomplete backup file was deleted; the drive is as it was.',
      );
      await expect(page.getByRole('button', { name: 'Show in folder' }).count()).resolves.toBe(0);
      expect(existsSync(file)).toBe(false);
      expect(existsSync(`${file}.incomplete`)).toBe(false);
      expect(app.bridge.effects).toMatchObject({ sleepBlocks: 1, sleepReleases: 1 });
    } finally {
      await app.close();
      group.remove();
    }
  });

  it('dropping a file anywhere selects it; a compressed OS image shows what it holds and flashes to the drive as decoded bytes, free space left out as the end screen says; a zip without an image is refused', async () => {
    const dir = scratchDir();
    writeRandomFile(join(dir, 'dropped.img'), 4 * MiB);
    const raw = osImage(dir, 24 * MiB);
    sh(dir, 'xz -T2 -3 -k os.img && mv os.img.xz os-image.img.xz');
    writeFileSync(join(dir, 'readme.txt'), 'release notes\n');
    sh(dir, 'zip -q notes.zip readme.txt');
    const loop = createLoop({ size: 32 * MiB, dir });
    const app = await openApp(context, { dropDir: dir, settings: { showVirtual: true } });
    try {
      const { page } = app;
      const drop = async (name: string, screenshot?: string) => {
        const dataTransfer = await page.evaluateHandle(IN_PAGE.dataTransferWithFile, name);
        await page.dispatchEvent('main', 'dragenter', { dataTransfer });
        await page.dispatchEvent('main', 'dragover', { dataTransfer });
        if (screenshot !== undefined) await app.screenshot(screenshot);
        await page.dispatchEvent('main', 'drop', { dataTransfer });
      };

      await drop('dropped.img', '16-drop-overlay');
      await expect.poll(() => page.getByTestId('image-name').textContent()).toBe('dropped.img');
      await expect(page.getByTestId('image-format').textContent()).resolves.toBe('Raw disk image');

      await drop('notes.zip');
      await expect.poll(() => page.getByRole('alert').textContent()).toContain('notes.zip holds no disk image');

      await drop('os-image.img.xz');
      // The probe decodes the start of the xz image in its own process; under the full suite's load
      // it took longer than the poll's default 1 s (the name still showed dropped.img).
      await expect
        .poll(() => page.getByTestId('image-name').textContent(), { timeout: 15_000 })
        .toBe('os-image.img.xz');
      await expect(page.getByTestId('image-format').textContent()).resolves.toBe('xz-compressed image');
      await expect(page.getByTestId('image-writes').textContent()).resolves.toBe(formatBytes(24 * MiB));
      await expect(page.getByTestId('image-partitions').textContent()).resolves.toMatch(
        /^GPT: boot \(.+\), root \(.+\)$/,
      );
      await app.screenshot('17-compressed-image');

      await flashChosenImageAndCompare(app, loop.path, raw, 24 * MiB, true);
    } finally {
      await app.close();
    }
  });

  it('works from the keyboard alone; with verification off the end screen says "not verified" and is not green', async () => {
    const { dir, image, loop } = imageAndLoop(6 * MiB + 512, 16 * MiB, 'small.img');
    const app = await openApp(context, {
      dropDir: dir,
      settings: { showVirtual: true, verify: false },
      colorScheme: 'dark',
    });
    try {
      const { page, bridge } = app;
      // Every listed drive is two stops (its box and Back up…), and other tests' loop devices are listed too.
      const tabTo = async (name: string) => {
        for (let i = 0; i < 200; i++) {
          await page.keyboard.press('Tab');
          if ((await page.evaluate(IN_PAGE.focusedText)) === name) return;
        }
        throw new Error(`Tab never reached "${name}"`);
      };
      bridge.answerDialog(image);
      await tabTo('Choose image…');
      // The focus ring is visible: the outline :focus-visible draws.
      await expect(page.locator(':focus').evaluate(IN_PAGE.outlineStyle)).resolves.toBe('solid');
      await page.keyboard.press('Enter');
      await page.getByTestId('image-name').waitFor();
      await tabTo('Select target…');
      await page.keyboard.press('Enter');
      const row = page.locator(`li[data-device="${loop.path}"]`);
      await row.waitFor();
      await row.getByRole('checkbox').focus();
      await page.keyboard.press('Space');
      await tabTo('Select 1 drive');
      await page.keyboard.press('Enter');
      assertTestTarget(loop.path);
      await tabTo('Flash!');
      await page.keyboard.press('Enter');
      // Cancel has the focus in the erase confirmation: Enter alone must not erase anything.
      await expect(page.evaluate(IN_PAGE.focusedText)).resolves.toBe('Cancel');
      await tabTo('Erase and flash');
      await page.keyboard.press('Enter');

      await endScreen(page, 'unverified').waitFor({ timeout: 30_000 });
      await app.screenshot('18-unverified-dark');
      const color = await page.getByRole('heading', { name: 'Written, not verified' }).evaluate(IN_PAGE.color);
      // The theme's green, resolved the same way the heading's colour is.
      const green = await page.evaluate(IN_PAGE.resolveColor, 'var(--success)');
      expect(color).toMatch(/^rgb/);
      expect(color).not.toBe(green);
      execFileSync('cmp', ['-n', String(6 * MiB + 512), image, loop.path]);
    } finally {
      await app.close();
    }
  });

  it('started by a double-click on an image, Sluice opens with it chosen; a second double-click chooses the next', async () => {
    const dir = scratchDir();
    const image = join(dir, 'debian-12-arm64.img');
    writeRandomFile(image, 8 * MiB);
    execFileSync('sfdisk', ['--quiet', image], { input: 'label: dos\nstart=2048, type=83\n' });
    writeRandomFile(join(dir, 'second.img'), 2 * MiB);
    // What a Linux file manager runs for the AppImage: its --no-sandbox, then the desktop file's %U.
    const app = await openApp(context, {
      dropDir: dir,
      startedWith: {
        argv: ['/tmp/.mount_SluiceQ1w2e3/sluice', '--no-sandbox', pathToFileURL(image).href],
        workingDirectory: '/',
      },
    });
    try {
      const { page, bridge } = app;
      await expect.poll(() => page.getByTestId('image-name').textContent()).toBe('debian-12-arm64.img');
      await expect(page.getByLabel('Image details').textContent()).resolves.toMatch(/Raw disk image.*MBR/);
      await app.screenshot('22-opened-with');

      // Sluice is running: the next double-click starts a second instance, which hands its command line over and quits.
      bridge.handOff.openCommandLine(['/opt/Sluice/sluice', '--allow-file-access-from-files', 'second.img'], dir);
      await expect.poll(() => page.getByTestId('image-name').textContent()).toBe('second.img');
      expect(bridge.notes).toEqual([]);
      expect(app.pageErrors).toEqual([]);
    } finally {
      await app.close();
    }
  });

  it('an image opened mid-flash is refused with a notice on the progress screen; the flash writes the image it started with', async () => {
    const { dir, image, loop } = imageAndLoop(48 * MiB, 64 * MiB, 'first.img');
    writeRandomFile(join(dir, 'other.img'), 4 * MiB);
    const group = throttledGroup(loop.path, 20 * 1000 * 1000);
    const app = await openApp(context, {
      dropDir: dir,
      settings: { showVirtual: true },
      cgroupDir: group.dir,
      startedWith: { argv: ['/opt/Sluice/sluice', image], workingDirectory: '/' },
    });
    try {
      const { page, bridge } = app;
      await expect.poll(() => page.getByTestId('image-name').textContent()).toBe('first.img');
      await chooseDrive(page, loop.path);
      await flashAfterConfirming(app, loop.path);
      await page.getByTestId('phase').filter({ hasText: 'Writing' }).waitFor({ timeout: 30_000 });

      bridge.handOff.openCommandLine(['/opt/Sluice/sluice', 'other.img'], dir);
      const notice = page.getByTestId('flash-notice');
      await expect
        .poll(() => notice.textContent())
        .toBe(
          'other.img was not opened: a flash is running, and Sluice never changes the image under it. Open it again when the flash has ended.',
        );
      await expect(page.getByRole('heading', { name: 'Flashing first.img' }).isVisible()).resolves.toBe(true);
      await app.screenshot('23-opened-mid-flash');

      await endScreen(page, 'success').waitFor({ timeout: 60_000 });
      await expect(endScreen(page, 'success').textContent()).resolves.toContain('first.img');
      execFileSync('cmp', ['-n', String(48 * MiB), image, loop.path]);
      // The next drive gets the same image.
      await page.getByRole('button', { name: 'Flash another drive' }).click();
      await expect(page.getByTestId('image-name').textContent()).resolves.toBe('first.img');

      // Opened again once the flash has ended, as the notice said: now it is chosen.
      bridge.handOff.openCommandLine(['/opt/Sluice/sluice', 'other.img'], dir);
      await expect.poll(() => page.getByTestId('image-name').textContent()).toBe('other.img');
      expect(app.pageErrors).toEqual([]);
    } finally {
      await app.close();
      group.remove();
    }
  });
});
