import { afterAll, beforeAll, expect, it } from 'vitest';
import { MiB } from '../../common/domain/units.js';
import { assertTestTarget } from '../support/cli.js';
import { describeDevices } from '../support/device-suite.js';
import { discFixture } from '../support/iso-fixtures.js';
import { createLoop, digestFile, scratchDir } from '../support/loop-device.js';
import { chooseDrive, launchBrowser, openApp } from './app-harness.js';

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
        await expect(dialog.getByTestId('confirm-unbootable').textContent()).resolves.toMatch(
          /windows\.iso is a Windows installer ISO: written byte for byte, the stick boots nothing\. Write it as it is only for a virtual machine/,
        );
        await app.screenshot('41-iso-unbootable-warning');
        await dialog.getByRole('button', { name: 'Cancel' }).click();
        await dialog.waitFor({ state: 'detached' });
      } finally {
        await app.close();
      }
      expect(digestFile(loop.backing)).toBe(before);
    }, 120_000);
  },
);
