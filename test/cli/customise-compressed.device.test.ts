/**
 * A Raspberry Pi OS-like image whose boot partition has 512-byte clusters (mkfs.fat -s 1) and a
 * cmdline.txt and config.txt each over one cluster, flashed customised from .xz, .zst and .gz onto
 * loop devices: cmdline.txt, read back with mtools, keeps every byte of its command line, with the
 * customisation's arguments after it.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { firstRunArguments } from '../../user/customise/firstrun.js';
import { flashCli, resultsOf } from '../support/cli.js';
import { sshKeyPair } from '../support/customisation.js';
import { describeDevices } from '../support/device-suite.js';
import { createLoop, scratchDir } from '../support/loop-device.js';
import {
  LAYOUT_BOOT_OFFSET,
  LAYOUT_IMAGE_SIZE,
  layoutImage,
  LONG_PI_CMDLINE,
  LONG_PI_CONFIG,
  sh,
} from '../support/os-image.js';

/** A file of the boot partition, read from the card with mtools. */
function bootFile(device: string, name: string): Buffer {
  // mtools reads the device itself; its complaint that a loop device has no geometry is noise.
  return execFileSync('mtype', ['-i', `${device}@@${LAYOUT_BOOT_OFFSET}`, `::/${name}`], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
}

describeDevices('customising from a compressed image, with boot files over one cluster', () => {
  let image: string;
  let flags: string[];

  beforeAll(() => {
    const dir = scratchDir();
    image = layoutImage(dir, 'pi-os', {
      name: 'long.img',
      files: { 'cmdline.txt': LONG_PI_CMDLINE, 'config.txt': LONG_PI_CONFIG },
    });
    sh(dir, 'xz -k -1 long.img && zstd -q -1 long.img && gzip -k -1 long.img');
    writeFileSync(join(dir, 'password'), 'hunter2\n');
    flags = [
      '--no-eject',
      '--hostname',
      'pi',
      '--user',
      'alice',
      '--password-file',
      join(dir, 'password'),
      '--ssh-key',
      sshKeyPair(dir).publicKey,
      '--wifi-country',
      'DE',
      '--wifi-ssid',
      'lab',
      '--timezone',
      'Europe/Berlin',
    ];
  });

  it.each(['.xz', '.zst', '.gz'])(
    '%s: cmdline.txt keeps every byte of its command line, then the arguments',
    async (suffix) => {
      const card = createLoop({ size: LAYOUT_IMAGE_SIZE + 16 * 1024 * 1024 });
      const run = await flashCli(`${image}${suffix}`, [card.path], flags);
      expect(run.code, run.stderr).toBe(0);
      expect(resultsOf(run).get(card.path)).toMatchObject({ status: 'ok', verified: true, customised: true });
      const cmdline = bootFile(card.path, 'cmdline.txt').toString('utf8');
      const args = ['cfg80211.ieee80211_regdom=DE', ...firstRunArguments()];
      expect(cmdline).toBe(`${LONG_PI_CMDLINE.trimEnd()} ${args.join(' ')}\n`);
      expect(bootFile(card.path, 'config.txt').toString('utf8')).toBe(LONG_PI_CONFIG);
      expect(readFileSync(card.backing).includes(Buffer.from('hunter2'))).toBe(false);
    },
  );
});
