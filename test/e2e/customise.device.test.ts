/**
 * The app's Customise step (issue 13) in Chromium, against the real core, probe process and helper,
 * onto random-prefilled loop devices: a profile filled in with the keyboard and the form, a key
 * imported from ~/.ssh, saved (hashes only in the settings file), previewed, and flashed onto two
 * cards that get pi-1 and pi-2. The cards are then checked with the field's own tools, byte for
 * byte against what the settings give, and grepped whole for the secrets.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BrowserContext, Locator, Page } from 'playwright-core';
import * as v from 'valibot';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { customisationFor, ProfileSchema } from '../../common/domain/customisation.js';
import { withArguments } from '../../user/customise/cmdline.js';
import { firstRunArguments, firstRunScript } from '../../user/customise/firstrun.js';
import { wifiPsk } from '../../user/customise/secrets.js';
import { assertTestTarget } from '../support/cli.js';
import { checkShellScript, glibcCrypt, sshKeyPair } from '../support/customisation.js';
import { describeDevices } from '../support/device-suite.js';
import { createLoop, readBytes, scratchDir, type LoopDevice } from '../support/loop-device.js';
import {
  LAYOUT_BOOT_OFFSET,
  LAYOUT_BOOT_SIZE,
  LAYOUT_IMAGE_SIZE,
  LAYOUT_ROOT_OFFSET,
  LAYOUT_ROOT_SIZE,
  layoutImage,
  PI_CMDLINE,
  sh,
} from '../support/os-image.js';
import { differencesOutside, imageFreeSpace } from '../support/free-space.js';
import { serveFiles } from '../support/file-server.js';
import { serveLayoutCatalogue } from '../support/catalogue.js';
import { launchBrowser, openApp, type AppUnderTest } from './app-harness.js';

const CARD_SIZE = LAYOUT_IMAGE_SIZE + 16 * 1024 * 1024;
/** An <input type=password> holds one line: quotes, a backslash, a dollar and non-ASCII letters test the rest. */
const PASSWORD = `Tr0ub4dor & "3" 'x' \\ $HOME ü`;
const WIFI_PASSPHRASE = `correct "horse" battery`;
const SSID = 'Café "Zoë" — Lab';

let browser: Awaited<ReturnType<typeof launchBrowser>> | undefined;
let context: BrowserContext;

function bootFile(device: string, name: string): Buffer {
  return execFileSync('mtype', ['-i', `${device}@@${LAYOUT_BOOT_OFFSET}`, `::/${name}`], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
}

function fatProblems(card: LoopDevice): string | null {
  const boot = join(scratchDir(), 'boot.part');
  writeFileSync(boot, readBytes(card.backing, LAYOUT_BOOT_OFFSET, LAYOUT_BOOT_SIZE));
  const run = spawnSync('fsck.fat', ['-n', boot], { encoding: 'utf8' });
  return run.status === 0 ? null : `${run.stdout}${run.stderr}`;
}

function endScreen(page: Page, tone: 'success' | 'failure') {
  return page.locator(`section[data-screen="${tone}"]`);
}

async function chooseImage(app: AppUnderTest, image: string): Promise<void> {
  app.bridge.answerDialog(image);
  await app.page.getByRole('button', { name: 'Choose image…' }).click();
  await app.page.getByTestId('image-customisation').waitFor();
}

/** The Customise dialog's settings used, then Flash!, confirmed with the customisation named, to a green end that says customised. */
async function useSettingsAndFlash(page: Page, dialog: Locator): Promise<void> {
  await dialog.getByRole('button', { name: 'Use these settings' }).click();
  await dialog.waitFor({ state: 'detached' });
  await page.getByRole('button', { name: 'Flash!' }).click();
  const confirm = page.getByRole('dialog', { name: 'Erase this drive?' });
  await confirm.getByTestId('confirm-customisation').waitFor();
  await confirm.getByRole('button', { name: 'Erase and flash' }).click();
  await endScreen(page, 'success').waitFor({ timeout: 120_000 });
  await expect(page.locator('li.result.ok').textContent()).resolves.toContain('Written, verified and customised');
}

async function chooseDrives(page: Page, devices: string[]): Promise<void> {
  await page.getByRole('button', { name: 'Select target…' }).click();
  for (const device of devices) {
    const row = page.locator(`li[data-device="${device}"]`);
    await row.waitFor();
    await row.getByRole('checkbox').check();
  }
  await page.getByRole('button', { name: `Select ${devices.length} drive${devices.length === 1 ? '' : 's'}` }).click();
}

describeDevices('the Customise step, in Chromium, against the real core and helper (issue 13)', () => {
  beforeAll(async () => {
    browser = await launchBrowser();
    context = browser.context;
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('customises two cards from one saved profile: pi-1 and pi-2, a key from ~/.ssh, written, verified, and no secret in clear on the cards or in the settings', async () => {
    const dir = scratchDir();
    const image = layoutImage(dir, 'pi-os');
    sh(dir, 'xz -T2 -k -1 pi-os.img');
    const ssh = join(dir, '.ssh');
    mkdirSync(ssh);
    const pair = sshKeyPair(dir, 'ed25519', 'alice@laptop');
    writeFileSync(join(ssh, 'id_ed25519.pub'), readFileSync(pair.publicKey));
    const key = readFileSync(pair.publicKey, 'utf8').trim();
    const cards = [createLoop({ size: CARD_SIZE, dir }), createLoop({ size: CARD_SIZE, dir })];
    cards.forEach((card) => assertTestTarget(card.path));
    const app = await openApp(context, { dropDir: dir, settings: { showVirtual: true, eject: false } });
    const { page } = app;
    try {
      await chooseImage(app, `${image}.xz`);
      await expect(page.getByTestId('image-customisation').textContent()).resolves.toBe(
        'Can be customised: Raspberry Pi OS first run (firstrun.sh).',
      );
      await chooseDrives(
        page,
        cards.map((c) => c.path),
      );

      // Opened from the keyboard.
      await page.getByRole('button', { name: 'Customise…' }).focus();
      await page.keyboard.press('Enter');
      const dialog = page.getByRole('dialog', { name: 'Customise' });
      await dialog.waitFor();
      await expect(dialog.getByTestId('customise-method').textContent()).resolves.toMatch(
        /^Raspberry Pi OS first run \(firstrun\.sh\): .*cmdline\.txt and config\.txt/,
      );
      // Typed field to field with Tab, as a keyboard user fills it in.
      await dialog.getByLabel('Host name').focus();
      await page.keyboard.type('pi-{n}');
      await page.keyboard.press('Tab');
      await page.keyboard.type('alice');
      await page.keyboard.press('Tab');
      await page.keyboard.type(PASSWORD);
      await dialog.getByRole('radio', { name: 'On, public keys only' }).check();
      await dialog.getByRole('button', { name: 'Import from ~/.ssh…' }).click();
      await dialog.getByRole('button', { name: 'Add id_ed25519.pub' }).click();
      await expect(dialog.getByLabel('Authorized keys').inputValue()).resolves.toBe(key);
      await dialog.getByLabel('Network name (SSID)').fill(SSID);
      await dialog.getByLabel('Wi-Fi password').fill(WIFI_PASSPHRASE);
      await dialog.getByLabel('Hidden network').check();
      await dialog.getByLabel('Wi-Fi country').fill('de');
      await dialog.getByLabel('Time zone').fill('Europe/Berlin');
      await dialog.getByLabel('Keyboard layout').fill('de');
      await dialog.getByLabel('Profile name').fill('Classroom');
      await app.screenshot('customise-form');
      await dialog.getByRole('button', { name: 'Save profile' }).click();
      await dialog.getByRole('status').filter({ hasText: 'Saved as "Classroom"' }).waitFor();
      // The typed secrets are gone from the form: only their hashes are held.
      await expect(dialog.getByLabel('Password', { exact: true }).inputValue()).resolves.toBe('');

      const settingsFile = join(dir, 'settings.json');
      const settingsText = readFileSync(settingsFile, 'utf8');
      for (const secret of [
        PASSWORD,
        JSON.stringify(PASSWORD).slice(1, -1),
        WIFI_PASSPHRASE,
        JSON.stringify(WIFI_PASSPHRASE).slice(1, -1),
      ])
        expect(settingsText).not.toContain(secret);
      const saved = v.parse(ProfileSchema, (JSON.parse(settingsText) as { profiles: unknown[] }).profiles[0]);
      expect(saved).toMatchObject({
        name: 'Classroom',
        hostname: 'pi-{n}',
        nextCard: 1,
        ssh: { passwordAuth: false, authorizedKeys: [key] },
        wifi: { ssid: SSID, psk: wifiPsk(WIFI_PASSPHRASE, SSID), hidden: true, country: 'DE' },
      });
      const hash = saved.user?.passwordHash ?? '';
      expect(glibcCrypt(PASSWORD, hash)).toBe(hash);

      await dialog.getByRole('button', { name: 'Show what is written' }).click();
      const preview = dialog.getByRole('region', { name: 'Files written' });
      await preview.waitFor();
      await expect(preview.textContent()).resolves.toMatch(/of each card:.*firstrun\.sh \(.*\), cmdline\.txt \(.*\)/);
      await expect(dialog.getByTestId('preview-hostnames').textContent()).resolves.toBe(
        'Host names: card 1: pi-1, card 2: pi-2',
      );
      await app.screenshot('customise-preview');
      await dialog.getByRole('button', { name: 'Use these settings' }).focus();
      await page.keyboard.press('Enter');
      await dialog.waitFor({ state: 'detached' });
      await expect(page.getByTestId('image-customisation').textContent()).resolves.toBe(
        'Customised: host pi-{n} (next: 1), user alice, SSH with 1 key, Wi-Fi Café "Zoë" — Lab, Europe/Berlin, keyboard de.',
      );

      await page.getByRole('button', { name: 'Flash!' }).click();
      const confirm = page.getByRole('dialog', { name: 'Erase these 2 drives?' });
      await confirm.getByTestId('confirm-customisation').waitFor();
      await expect(confirm.getByTestId('confirm-customisation').textContent()).resolves.toBe(
        'Then customised for systemd-firstrun: firstrun.sh, cmdline.txt (host pi-1, pi-2).',
      );
      await app.screenshot('customise-confirm');
      await confirm.getByRole('button', { name: 'Erase and flash' }).click();
      await endScreen(page, 'success').waitFor({ timeout: 120_000 });
      await expect(page.locator('li.result.ok').allTextContents()).resolves.toEqual([
        expect.stringContaining('Written, verified and customised'),
        expect.stringContaining('Written, verified and customised'),
      ]);
      await app.screenshot('customise-end');

      for (const [i, card] of cards.entries()) {
        expect(fatProblems(card)).toBeNull();
        const script = bootFile(card.path, 'firstrun.sh').toString('utf8');
        const c = customisationFor(saved, i + 1);
        expect(c.hostname).toBe(`pi-${i + 1}`);
        expect(script).toBe(firstRunScript(c));
        expect(checkShellScript(scratchDir(), script)).toEqual([]);
        const cmdline = bootFile(card.path, 'cmdline.txt').toString('utf8');
        expect(cmdline).toBe(withArguments(PI_CMDLINE, ['cfg80211.ieee80211_regdom=DE', ...firstRunArguments()]));
        expect(cmdline.split('\n')).toHaveLength(2);
        const whole = readFileSync(card.backing);
        for (const secret of [PASSWORD, WIFI_PASSPHRASE])
          expect(whole.indexOf(Buffer.from(secret, 'utf8')), secret).toBe(-1);
      }
      // The saved profile's {n} moved past both cards; the next flash names its card pi-3.
      const after = JSON.parse(readFileSync(settingsFile, 'utf8')) as { profiles: { nextCard: number }[] };
      expect(after.profiles[0]?.nextCard).toBe(3);
      expect(app.pageErrors).toEqual([]);
    } finally {
      await app.close();
    }
  }, 240_000);

  it('an image with no first-boot method says so and what was looked for; a customisation already chosen is dropped, and the plain flash writes it', async () => {
    const dir = scratchDir();
    const withMethod = layoutImage(dir, 'pi-os');
    const none = layoutImage(dir, 'none');
    const card = createLoop({ size: CARD_SIZE, dir });
    assertTestTarget(card.path);
    const app = await openApp(context, { dropDir: dir, settings: { showVirtual: true, eject: false } });
    const { page } = app;
    try {
      await chooseImage(app, withMethod);
      await page.getByRole('button', { name: 'Customise…' }).click();
      const dialog = page.getByRole('dialog', { name: 'Customise' });
      await dialog.getByLabel('Host name').fill('kiosk');
      await dialog.getByRole('button', { name: 'Use these settings' }).click();
      await dialog.waitFor({ state: 'detached' });
      await expect(page.getByTestId('image-customisation').textContent()).resolves.toBe('Customised: host kiosk.');

      app.bridge.answerDialog(none);
      await page.getByRole('button', { name: 'Change…' }).click();
      await page.getByTestId('image-customisation').filter({ hasText: 'Cannot be customised' }).waitFor();
      await page.getByRole('button', { name: 'Customise…' }).click();
      const refusal = page.getByRole('dialog', { name: 'Customise' });
      await expect(refusal.getByTestId('customise-method').textContent()).resolves.toMatch(
        /^This image cannot be customised\. .*looked for cmdline\.txt and config\.txt/,
      );
      await app.screenshot('customise-no-method');
      await page.keyboard.press('Escape');
      await refusal.waitFor({ state: 'detached' });

      await chooseDrives(page, [card.path]);
      await page.getByRole('button', { name: 'Flash!' }).click();
      const confirm = page.getByRole('dialog', { name: 'Erase this drive?' });
      await confirm.waitFor();
      await expect(confirm.getByTestId('confirm-customisation').count()).resolves.toBe(0);
      await confirm.getByRole('button', { name: 'Erase and flash' }).click();
      await endScreen(page, 'success').waitFor({ timeout: 120_000 });
      await expect(page.locator('li.result.ok').textContent()).resolves.toContain('Written and verified');
      // Free space is left out by default: the card holds the image everywhere else, and its filesystems are clean.
      await expect(page.getByTestId('result-skipped').count()).resolves.toBeGreaterThan(0);
      expect(
        differencesOutside(
          readBytes(card.backing, 0, LAYOUT_IMAGE_SIZE),
          readFileSync(none),
          await imageFreeSpace(none, scratchDir()),
        ),
      ).toEqual([]);
      expect(fatProblems(card)).toBeNull();
      const root = join(scratchDir(), 'root.part');
      writeFileSync(root, readBytes(card.backing, LAYOUT_ROOT_OFFSET, LAYOUT_ROOT_SIZE));
      expect(spawnSync('e2fsck', ['-fn', root], { encoding: 'utf8' }).status).toBe(0);
      expect(app.pageErrors).toEqual([]);
    } finally {
      await app.close();
    }
  }, 240_000);

  it('an image at a web address: its method is found when the settings are checked, and the card it is written to is customised', async () => {
    const dir = scratchDir();
    layoutImage(dir, 'pi-os');
    sh(dir, 'xz -T2 -k -1 pi-os.img');
    const server = await serveFiles([join(dir, 'pi-os.img.xz')], { ranges: true });
    const card = createLoop({ size: CARD_SIZE, dir });
    assertTestTarget(card.path);
    const app = await openApp(context, { dropDir: dir, settings: { showVirtual: true, eject: false } });
    const { page } = app;
    try {
      await page.getByRole('button', { name: 'Flash from URL…' }).click();
      await page.getByRole('textbox', { name: 'Image address' }).fill(`${server.base}/pi-os.img.xz`);
      await page.getByRole('button', { name: 'Open' }).click();
      await expect
        .poll(() => page.getByTestId('image-customisation').textContent())
        .toBe('Can be customised if it has a first-boot method: Sluice looks when you customise it.');
      await chooseDrives(page, [card.path]);
      await page.getByRole('button', { name: 'Customise…' }).click();
      const dialog = page.getByRole('dialog', { name: 'Customise' });
      await dialog.getByLabel('Host name').fill('kiosk');
      await dialog.getByLabel('Time zone').fill('Europe/Paris');
      await dialog.getByRole('button', { name: 'Show what is written' }).click();
      await expect(dialog.getByTestId('preview-method').textContent()).resolves.toMatch(
        /^Raspberry Pi OS first run \(firstrun\.sh\): The boot partition \(partition 1\) has cmdline\.txt and config\.txt/,
      );
      await app.screenshot('customise-url-preview');
      await useSettingsAndFlash(page, dialog);
      expect(fatProblems(card)).toBeNull();
      expect(bootFile(card.path, 'firstrun.sh').toString('utf8')).toMatch(/set_hostname 'kiosk'[\s\S]*'Europe\/Paris'/);
      expect(app.pageErrors).toEqual([]);
    } finally {
      await app.close();
      await server.close();
    }
  }, 240_000);

  it('an OS chosen from a catalogue: its init_format chooses cloud-init where the boot partition cannot tell, said in the preview, and the card it is written to is customised so', async () => {
    const dir = scratchDir();
    const server = await serveLayoutCatalogue(dir, [
      { name: 'Pi OS with cloud-init', layout: 'pi-os', initFormat: 'cloudinit-rpi' },
    ]);
    const card = createLoop({ size: CARD_SIZE, dir });
    assertTestTarget(card.path);
    const app = await openApp(context, {
      dropDir: dir,
      settings: { showVirtual: true, eject: false, repositories: [server.top] },
    });
    const { page } = app;
    try {
      await page.getByRole('button', { name: 'Choose OS…' }).click();
      await page
        .getByRole('dialog', { name: 'Choose OS' })
        .getByTestId('os-entry')
        .filter({ hasText: 'Pi OS with cloud-init' })
        .click();
      await expect
        .poll(() => page.getByTestId('image-customisation').textContent())
        .toBe('Can be customised if it has a first-boot method: Sluice looks when you customise it.');
      await chooseDrives(page, [card.path]);
      await page.getByRole('button', { name: 'Customise…' }).click();
      const dialog = page.getByRole('dialog', { name: 'Customise' });
      await dialog.getByLabel('Host name').fill('lab-{n}');
      await dialog.getByRole('button', { name: 'Show what is written' }).click();
      await expect(dialog.getByTestId('preview-method').textContent()).resolves.toMatch(
        /^cloud-init \(NoCloud seed on the boot partition\): The catalogue entry chooses cloud-init \(init_format "cloudinit-rpi"\): the boot partition \(partition 1\) has cmdline\.txt and config\.txt/,
      );
      await app.screenshot('customise-catalogue-preview');
      await useSettingsAndFlash(page, dialog);
      expect(fatProblems(card)).toBeNull();
      expect(bootFile(card.path, 'user-data').toString('utf8')).toMatch(/hostname: lab-1/);
      expect(bootFile(card.path, 'cmdline.txt').toString('utf8')).toBe(
        `${PI_CMDLINE.trimEnd()} ds=nocloud;s=file:///boot/firmware/\n`,
      );
      expect(app.pageErrors).toEqual([]);
    } finally {
      await app.close();
      await server.close();
    }
  }, 240_000);
});
