/**
 * `sluice flash os:ENTRY --hostname ...`: an OS chosen from a catalogue served on 127.0.0.1
 * (test/support/catalogue.ts serveLayoutCatalogue) is customised, by the method its init_format
 * chooses where the image's contents cannot tell (a download is read as a stream: its root
 * filesystem is not reached), and by the contents where they can, which the customisation's
 * words say. Each card is checked with fsck.fat and its files read back with mtools.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { FileServer } from '../support/file-server.js';
import { serveLayoutCatalogue } from '../support/catalogue.js';
import { flashCli, resultsOf, type CliRun } from '../support/cli.js';
import { cloudInitSchemaProblem } from '../support/customisation.js';
import { describeDevices } from '../support/device-suite.js';
import { createLoop, digestFile, readBytes, scratchDir, type LoopDevice } from '../support/loop-device.js';
import { LAYOUT_BOOT_OFFSET, LAYOUT_BOOT_SIZE, LAYOUT_IMAGE_SIZE, PI_CMDLINE } from '../support/os-image.js';
import { firstRunArguments } from '../../user/customise/firstrun.js';

const CARD_SIZE = LAYOUT_IMAGE_SIZE + 16 * 1024 * 1024;

function bootFile(device: string, name: string): string {
  return execFileSync('mtype', ['-i', `${device}@@${LAYOUT_BOOT_OFFSET}`, `::/${name}`], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  });
}

function fatProblem(card: LoopDevice): string | null {
  const boot = join(scratchDir(), 'boot.part');
  writeFileSync(boot, readBytes(card.backing, LAYOUT_BOOT_OFFSET, LAYOUT_BOOT_SIZE));
  const run = spawnSync('fsck.fat', ['-n', boot], { encoding: 'utf8' });
  return run.status === 0 ? null : `${run.stdout}${run.stderr}`;
}

describeDevices(
  'sluice flash os:ENTRY with customisation: init_format chooses the method, the image contents win',
  () => {
    let dir: string;
    let server: FileServer & { top: string };
    let env: Record<string, string>;

    beforeAll(async () => {
      dir = scratchDir();
      server = await serveLayoutCatalogue(dir, [
        { name: 'Pi OS', layout: 'pi-os', initFormat: 'systemd' },
        { name: 'Pi OS with cloud-init', layout: 'pi-os', initFormat: 'cloudinit-rpi' },
        { name: 'Ubuntu said to be systemd', layout: 'ubuntu', initFormat: 'systemd' },
        { name: 'Pi OS without customisation', layout: 'pi-os', initFormat: 'none' },
      ]);
      env = { SLUICE_CACHE_DIR: join(dir, 'cache'), SLUICE_RETRY_PAUSE_MS: '50' };
    });

    afterAll(() => server.close());

    function flash(entry: string, card: LoopDevice, flags: string[] = []): Promise<CliRun> {
      return flashCli(
        `os:${entry}`,
        [card.path],
        ['--no-eject', '--repo', server.top, '--hostname', 'lab-{n}', '--timezone', 'Europe/London', ...flags],
        { env },
      );
    }

    const customisation = (run: CliRun) =>
      run.events.find((e) => e.type === 'customisation') as { method: string; why: string } | undefined;

    it('init_format "systemd" on a Raspberry Pi OS layout: firstrun.sh and cmdline.txt, said to agree; again from the image cache', async () => {
      for (const from of ['downloaded while it is written', 'from the image cache']) {
        const card = createLoop({ size: CARD_SIZE });
        const run = await flash('Pi OS', card);
        expect(run.code, run.stderr).toBe(0);
        expect(run.stderr).toContain(`sluice: Pi OS: ${from}`);
        expect(resultsOf(run).get(card.path)).toMatchObject({ status: 'ok', verified: true, customised: true });
        expect(customisation(run)?.method).toBe('systemd-firstrun');
        expect(customisation(run)?.why).toMatch(/The catalogue entry says the same \(init_format "systemd"\)\.$/);
        expect(fatProblem(card)).toBeNull();
        expect(bootFile(card.path, 'firstrun.sh')).toMatch(/set_hostname 'lab-1'/);
        expect(bootFile(card.path, 'cmdline.txt')).toBe(`${PI_CMDLINE.trimEnd()} ${firstRunArguments().join(' ')}\n`);
      }
    });

    it('init_format "cloudinit-rpi" on a boot partition that cannot tell (cmdline.txt and config.txt, root not read): the catalogue chooses cloud-init, and cmdline.txt names the seed', async () => {
      const card = createLoop({ size: CARD_SIZE });
      const run = await flash('Pi OS with cloud-init', card);
      expect(run.code, run.stderr).toBe(0);
      expect(resultsOf(run).get(card.path)).toMatchObject({ status: 'ok', verified: true, customised: true });
      expect(customisation(run)).toMatchObject({
        method: 'cloud-init',
        why: expect.stringMatching(
          /^The catalogue entry chooses cloud-init \(init_format "cloudinit-rpi"\): the boot partition \(partition 1\) has cmdline\.txt and config\.txt, which do not tell the methods apart, and the root filesystem was not read/,
        ),
      });
      expect(fatProblem(card)).toBeNull();
      const userData = bootFile(card.path, 'user-data');
      expect(userData).toMatch(/^#cloud-config\n[^]*hostname: lab-1/);
      expect(cloudInitSchemaProblem(scratchDir(), userData)).toBeNull();
      expect(bootFile(card.path, 'meta-data')).toMatch(/instance-id/);
      expect(bootFile(card.path, 'cmdline.txt')).toBe(`${PI_CMDLINE.trimEnd()} ds=nocloud;s=file:///boot/firmware/\n`);
      expect(() => bootFile(card.path, 'firstrun.sh')).toThrow();
    });

    it('init_format "systemd" on an image whose boot partition holds cloud-init seed files: the contents win, and the words say so', async () => {
      const card = createLoop({ size: CARD_SIZE });
      const run = await flash('Ubuntu said to be systemd', card);
      expect(run.code, run.stderr).toBe(0);
      expect(resultsOf(run).get(card.path)).toMatchObject({ status: 'ok', customised: true });
      expect(customisation(run)).toMatchObject({
        method: 'cloud-init',
        why: expect.stringMatching(
          /holds cloud-init seed files \(user-data, meta-data, network-config\)\. The catalogue entry names systemd-firstrun \(init_format "systemd"\), but the image's own contents win\.$/,
        ),
      });
      expect(fatProblem(card)).toBeNull();
      expect(bootFile(card.path, 'user-data')).toMatch(/hostname: lab-1/);
      expect(() => bootFile(card.path, 'firstrun.sh')).toThrow();
    });

    it('init_format "none" on a boot partition that cannot tell: the customisation is refused, saying why, and nothing is written', async () => {
      const card = createLoop({ size: CARD_SIZE });
      const before = digestFile(card.backing);
      const run = await flash('Pi OS without customisation', card);
      expect(run.code).toBe(2);
      expect(run.stderr).toMatch(
        /This image cannot be customised: The catalogue entry chooses no customisation \(init_format "none"\): the boot partition \(partition 1\) has cmdline\.txt and config\.txt/,
      );
      expect(run.stderr).toMatch(/Nothing was written\./);
      expect(digestFile(card.backing)).toBe(before);
    });
  },
);
