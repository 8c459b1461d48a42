import { execFileSync, spawnSync } from 'node:child_process';
import { closeSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { EXTERNAL_LINKS } from '../../common/app/links.js';
import { KiB, MiB } from '../../common/domain/units.js';
import { assertTestTarget } from '../support/cli.js';
import { describeDevices } from '../support/device-suite.js';
import { FAKE_CLAIMED, FAKE_REAL, fakeCard } from '../support/fake-card.js';
import {
  attachLoop,
  createLoop,
  digestFile,
  readBytes,
  scratchDir,
  waitForPath,
  writeRandomFile,
} from '../support/loop-device.js';
import { launchBrowser, openApp, type AppUnderTest } from './app-harness.js';

/** Chooses the image through the (answered) file dialog, ticks the card, and confirms the flash. */
async function flashTo(app: AppUnderTest, image: string, device: string): Promise<void> {
  const { page } = app;
  app.bridge.answerDialog(image);
  await page.getByRole('button', { name: 'Choose image…' }).click();
  await page.getByRole('button', { name: 'Select target…' }).click();
  const row = page.locator(`li[data-device="${device}"]`);
  await row.waitFor();
  await row.getByRole('checkbox').check();
  await page.getByRole('button', { name: 'Select 1 drive' }).click();
  assertTestTarget(device);
  await page.getByRole('button', { name: 'Flash!' }).click();
  await page
    .getByRole('dialog', { name: 'Erase this drive?' })
    .getByRole('button', { name: 'Erase and flash' })
    .click();
}

let browser: Awaited<ReturnType<typeof launchBrowser>> | undefined;
let context: BrowserContext;

describeDevices('card health in the desktop app', () => {
  beforeAll(async () => {
    browser = await launchBrowser();
    context = browser.context;
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('a flash onto a fake-capacity card ends on the failure screen naming its real size', async () => {
    const dir = scratchDir();
    const image = join(dir, 'image.img');
    writeRandomFile(image, 128 * MiB);
    const card = await fakeCard(FAKE_CLAIMED, { kind: 'limbo', real: FAKE_REAL });
    const app = await openApp(context, { dropDir: dir, settings: { showVirtual: true } });
    try {
      await flashTo(app, image, card.path);
      const { page } = app;
      await page.locator('section[data-screen="failure"]').waitFor({ timeout: 60_000 });
      // The estimate is the last marker that came back (265.7 MB) of the 268.4 MB the card holds.
      await expect(page.getByTestId('failure-headline').textContent()).resolves.toMatch(
        /^Fake capacity: the drive holds about 26\d MB, not the 4\.3 GB it claims\.$/,
      );
      await app.screenshot('health-01-fake-card');
      expect(app.pageErrors).toEqual([]);
    } finally {
      await app.close();
    }
  });

  it('a card that corrupts one block once ends green, the repair and the capacity check stated on the end screen', async () => {
    const dir = scratchDir();
    const image = join(dir, 'image.img');
    writeRandomFile(image, 32 * MiB);
    // fake-card.py flips a byte of this 4 KiB block the first time it is written.
    const card = await fakeCard(64 * MiB, { kind: 'flaky', at: 20 * MiB + 8 * KiB, always: false });
    const app = await openApp(context, { dropDir: dir, settings: { showVirtual: true, eject: false } });
    try {
      await flashTo(app, image, card.path);
      const { page } = app;
      await page.locator('section[data-screen="success"]').waitFor({ timeout: 60_000 });
      await expect(page.getByTestId('result-repaired').textContent()).resolves.toContain(
        `repaired 1 block at offset ${20 * MiB}`,
      );
      await expect(page.getByTestId('result-capacity').textContent()).resolves.toMatch(
        /^Capacity checked: \d+ test blocks past the image came back/,
      );
      await app.screenshot('health-02-repaired');
      expect(app.pageErrors).toEqual([]);
    } finally {
      await app.close();
    }
  });

  it('"Check…" in the drive list: a fake card is named with its real size, an honest one passes; nothing on either is lost', async () => {
    const fake = await fakeCard(FAKE_CLAIMED, { kind: 'limbo', real: FAKE_REAL }, { random: true });
    const honest = createLoop({ size: 64 * MiB });
    const before = { fake: digestFile(fake.store), honest: digestFile(honest.backing) };
    const app = await openApp(context, { dropDir: scratchDir(), settings: { showVirtual: true } });
    try {
      const { page } = app;
      const check = async (device: string, screenshot?: string) => {
        assertTestTarget(device);
        await page.getByRole('button', { name: 'Select target…' }).click();
        await page.getByRole('button', { name: new RegExp(`^Check .*\\(${device}\\) for fake capacity$`) }).click();
        const dialog = page.getByRole('dialog', { name: 'Check this card for fake capacity?' });
        await dialog.waitFor();
        if (screenshot !== undefined) await app.screenshot(screenshot);
        await dialog.getByRole('button', { name: 'Check' }).click();
      };
      await check(fake.path, 'health-03-check-dialog');
      await page.locator('section[data-screen="failure"]').waitFor({ timeout: 60_000 });
      await expect(page.getByRole('heading', { name: 'Fake capacity found' }).isVisible()).resolves.toBe(true);
      await expect(page.getByTestId('failure-headline').textContent()).resolves.toBe(
        'Fake capacity: the drive holds about 268 MB, not the 4.3 GB it claims.',
      );
      await app.screenshot('health-04-check-fake');
      await page.getByRole('button', { name: 'Done' }).click();

      await check(honest.path);
      await page.locator('section[data-screen="success"]').waitFor({ timeout: 60_000 });
      await expect(
        page.getByRole('heading', { name: 'Card checked: it holds what it claims' }).isVisible(),
      ).resolves.toBe(true);
      await expect(page.getByTestId('check-result').textContent()).resolves.toMatch(
        /^It holds the 67\.1 MB it claims: \d+ test blocks over the whole drive were written, read back and put back/,
      );
      await app.screenshot('health-05-check-honest');
      expect(app.pageErrors).toEqual([]);
    } finally {
      await app.close();
    }
    expect({ fake: digestFile(fake.store), honest: digestFile(honest.backing) }).toEqual(before);
  });

  it('"Erase…" in the drive list: a 256 MiB drive becomes one FAT32 partition with the label; a label FAT cannot store is refused, nothing written', async () => {
    const loop = createLoop({ size: 256 * MiB });
    const untouched = readBytes(loop.backing, 128 * MiB, MiB);
    const head = readBytes(loop.backing, 0, 16 * MiB);
    const app = await openApp(context, { dropDir: scratchDir(), settings: { showVirtual: true } });
    try {
      const { page } = app;
      const erase = async (label: string, screenshot?: string) => {
        assertTestTarget(loop.path);
        await page.getByRole('button', { name: 'Select target…' }).click();
        await page.getByRole('button', { name: new RegExp(`^Erase .*\\(${loop.path}\\)$`) }).click();
        const dialog = page.getByRole('dialog', { name: 'Erase this drive?' });
        await dialog.getByRole('textbox', { name: 'Label (optional)' }).fill(label);
        if (screenshot !== undefined) await app.screenshot(screenshot);
        await dialog.getByRole('button', { name: 'Erase' }).click();
      };
      await erase('a/b');
      // The refusal comes back from the core: wait for it rather than look once.
      await page.getByText(/cannot be a FAT32 label/).waitFor({ timeout: 10_000 });
      expect(readBytes(loop.backing, 0, 16 * MiB).equals(head)).toBe(true);

      await erase('Holiday 26', 'health-06-erase-dialog');
      await page.locator('section[data-screen="success"]').waitFor({ timeout: 60_000 });
      await expect(page.getByRole('heading', { name: 'Drive erased' }).isVisible()).resolves.toBe(true);
      await expect(page.getByTestId('erase-result').textContent()).resolves.toMatch(
        /^One empty partition: its tables \(9\.4 MB\) written and read back/,
      );
      await app.screenshot('health-07-erased');
      expect(app.pageErrors).toEqual([]);
    } finally {
      await app.close();
    }
    const scanned = attachLoop(loop.backing, { partitions: true });
    await waitForPath(`${scanned.path}p1`);
    const tag = (name: string) =>
      execFileSync('blkid', ['-s', name, '-o', 'value', `${scanned.path}p1`], { encoding: 'utf8' }).trim();
    expect([tag('TYPE'), tag('LABEL')]).toEqual(['vfat', 'HOLIDAY 26']);
    expect(spawnSync('fsck.fat', ['-n', `${scanned.path}p1`]).status).toBe(0);
    expect(readBytes(loop.backing, 128 * MiB, MiB).equals(untouched)).toBe(true);
  });

  it('"Compare…" in the drive list: a drive holding the image matches; one byte changed on it is named by its offset; nothing is written', async () => {
    const dir = scratchDir();
    const image = join(dir, 'os.img');
    writeRandomFile(image, 16 * MiB);
    const loop = createLoop({ size: 32 * MiB, dir });
    execFileSync('dd', [`if=${image}`, `of=${loop.backing}`, 'bs=1M', 'conv=notrunc', 'status=none']);
    const app = await openApp(context, { dropDir: dir, settings: { showVirtual: true } });
    try {
      const { page } = app;
      const compare = async () => {
        assertTestTarget(loop.path);
        app.bridge.answerDialog(image);
        await page.getByRole('button', { name: 'Select target…' }).click();
        await page.getByRole('button', { name: new RegExp(`^Compare .*\\(${loop.path}\\) with an image$`) }).click();
      };
      await compare();
      await page.locator('section[data-screen="success"]').waitFor({ timeout: 60_000 });
      await expect(page.getByRole('heading', { name: 'The drive matches the image' }).isVisible()).resolves.toBe(true);
      await expect(page.getByTestId('verify-result').textContent()).resolves.toMatch(
        /^It holds the image: 16\.8 MB compared in .*, nothing written\.$/,
      );
      await app.screenshot('health-08-compare-match');
      await page.getByRole('button', { name: 'Done' }).click();

      const changedAt = 5 * MiB + 123;
      const fd = openSync(loop.backing, 'r+');
      writeSync(fd, Buffer.from([(readBytes(loop.backing, changedAt, 1)[0] ?? 0) ^ 0xff]), 0, 1, changedAt);
      closeSync(fd);
      const before = digestFile(loop.backing);
      await compare();
      await page.locator('section[data-screen="failure"]').waitFor({ timeout: 60_000 });
      await expect(page.getByRole('heading', { name: 'The drive differs from the image' }).isVisible()).resolves.toBe(
        true,
      );
      await expect(page.getByTestId('failure-headline').textContent()).resolves.toContain(`offset ${changedAt}`);
      await app.screenshot('health-09-compare-differs');
      expect(digestFile(loop.backing)).toBe(before);
      expect(app.pageErrors).toEqual([]);
    } finally {
      await app.close();
    }
  });

  it('a card that corrupts a block every time ends red, naming the byte it keeps corrupting, and offers the F3 guide', async () => {
    const dir = scratchDir();
    const image = join(dir, 'image.img');
    writeRandomFile(image, 32 * MiB);
    const flakyAt = 20 * MiB + 8 * KiB;
    const card = await fakeCard(64 * MiB, { kind: 'flaky', at: flakyAt, always: true });
    const app = await openApp(context, { dropDir: dir, settings: { showVirtual: true, eject: false } });
    try {
      await flashTo(app, image, card.path);
      const { page, bridge } = app;
      await page.locator('section[data-screen="failure"]').waitFor({ timeout: 60_000 });
      // fake-card.py flips byte 17 of the block.
      await expect(page.getByTestId('failure-headline').textContent()).resolves.toBe(
        `Verification failed at offset ${flakyAt + 17}: the card may be counterfeit or failing.`,
      );
      await expect(
        page.getByText(`The card keeps corrupting the block at byte offset ${flakyAt + 17}`).isVisible(),
      ).resolves.toBe(true);
      await app.screenshot('health-10-card-failing');
      expect(bridge.effects.notifications).toEqual([
        {
          title: 'Flash failed',
          body: `${card.path}: Verification failed at offset ${flakyAt + 17}: the card may be counterfeit or failing.`,
        },
      ]);
      await page.getByRole('button', { name: 'How to test a card for fake capacity (F3)' }).click();
      await expect.poll(() => bridge.openedLinks).toEqual([EXTERNAL_LINKS.fakeCardTest]);
      expect(app.pageErrors).toEqual([]);
    } finally {
      await app.close();
    }
  });
});
