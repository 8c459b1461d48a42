import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { MiB } from '../../common/domain/units.js';
import { assertTestTarget } from '../support/cli.js';
import { describeDevices } from '../support/device-suite.js';
import { discFixture } from '../support/iso-fixtures.js';
import { createLoop, digestFile, scratchDir } from '../support/loop-device.js';
import { chooseDrive, endScreen, launchBrowser, openApp } from './app-harness.js';
import { sh } from '../support/os-image.js';

let browser: Awaited<ReturnType<typeof launchBrowser>> | undefined;

describeDevices(
  'the app says what an ISO boots from, and warns before writing one that boots nothing from a stick',
  () => {
    beforeAll(async () => {
      browser = await launchBrowser();
    });
    afterAll(async () => {
      await browser?.close();
    });

    it('a Windows-like ISO: "Boots from" in the image step, and the erase confirmation warns; Cancel writes nothing', async () => {
      if (browser === undefined) throw new Error('no browser');
      const dir = scratchDir();
      const iso = discFixture(dir, 'windows');
      const loop = createLoop({ size: 16 * MiB, dir });
      const before = digestFile(loop.backing);
      const app = await openApp(browser.context, { dropDir: dir, settings: { showVirtual: true } });
      try {
        const { page, bridge } = app;
        bridge.answerDialog(iso);
        await page.getByRole('button', { name: 'Choose image…' }).click();
        await expect
          .poll(() => page.getByTestId('image-disc').textContent())
          .toBe('a DVD only: a Windows installer ISO (UDF); written as it is, a stick boots nothing');
        await app.screenshot('40-iso-windows-chosen');
        await chooseDrive(page, loop.path);
        assertTestTarget(loop.path);
        await page.getByRole('button', { name: 'Flash!' }).click();
        const dialog = page.getByRole('dialog', { name: 'Erase this drive?' });
        await dialog.waitFor();
        // A Windows ISO is made into an installer stick unless asked otherwise.
        const choice = dialog.getByTestId('iso-mode');
        await expect(
          choice.getByRole('radio', { name: /Make an installer stick from its files/ }).isChecked(),
        ).resolves.toBe(true);
        await expect(dialog.getByTestId('confirm-unbootable').count()).resolves.toBe(0);
        await app.screenshot('41-iso-installer-choice');
        await choice.getByRole('radio', { name: 'Write the ISO as it is' }).check();
        await expect(dialog.getByTestId('confirm-unbootable').textContent()).resolves.toMatch(
          /windows\.iso is a Windows installer ISO: written byte for byte, the stick boots nothing\. Write it as it is only for a virtual machine.* choose “Make an installer stick from its files” above\./,
        );
        await app.screenshot('42-iso-unbootable-warning');
        await dialog.getByRole('button', { name: 'Cancel' }).click();
        await dialog.waitFor({ state: 'detached' });
      } finally {
        await app.close();
      }
      expect(digestFile(loop.backing)).toBe(before);
    }, 120_000);

    it('the installer choice, confirmed: the builder process makes the stick, fsck clean, every file identical', async () => {
      if (browser === undefined) throw new Error('no browser');
      const dir = scratchDir();
      const iso = discFixture(dir, 'windows');
      const loop = createLoop({ size: 64 * MiB, dir });
      const app = await openApp(browser.context, { dropDir: dir, settings: { showVirtual: true } });
      try {
        const { page, bridge } = app;
        bridge.answerDialog(iso);
        await page.getByRole('button', { name: 'Choose image…' }).click();
        await page.getByTestId('image-disc').waitFor();
        await chooseDrive(page, loop.path);
        assertTestTarget(loop.path);
        await page.getByRole('button', { name: 'Flash!' }).click();
        const dialog = page.getByRole('dialog', { name: 'Erase this drive?' });
        await dialog.getByRole('button', { name: 'Erase and flash' }).click();
        await endScreen(page, 'success').waitFor({ timeout: 60_000 });
        await expect(endScreen(page, 'success').textContent()).resolves.toContain('Written and verified');
        await app.screenshot('43-iso-installer-written');
      } finally {
        await app.close();
      }
      const bytes = readFileSync(loop.backing);
      expect([bytes[446], bytes[450], bytes.readUInt32LE(454)]).toEqual([0x80, 0x0c, (4 * MiB) / 512]);
      sh(
        dir,
        `dd if=${loop.backing} of=partition.img bs=4M skip=1 status=none && fsck.fat -n partition.img >/dev/null && mkdir stick && mcopy -s -n -i partition.img ::/ stick/`,
      );
      sh(dir, 'diff -r stick tree');
    }, 120_000);
  },
);
