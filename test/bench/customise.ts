/**
 * The customisation rows of `npm run bench` (section "customise", issue 13): the same Raspberry Pi
 * OS-like image flashed with and without every customisation setting, raw and .xz, onto a loop
 * device on /dev/shm. The difference is what customising costs on top of the flash: planning the
 * boot partition's files in the probe process (for a compressed image, a decoder run up to the boot
 * partition's files), hashing the password, and writing, syncing and reading back the changed
 * blocks after the image.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLI } from '../support/cli.js';
import { sshKeyPair } from '../support/customisation.js';
import { assertOwnedLoop, createLoop } from '../support/loop-device.js';
import { LAYOUT_IMAGE_SIZE, layoutImage } from '../support/os-image.js';
import { medianOf, measure } from './measure.js';

const NODE = process.execPath;

export async function customiseSection(dir: string, runs: number): Promise<string> {
  const image = layoutImage(dir, 'pi-os');
  execFileSync('xz', ['-T2', '-k', '-1', image]);
  const loop = createLoop({ size: LAYOUT_IMAGE_SIZE + 16 * 1024 * 1024, dir, fill: 'allocated' });
  assertOwnedLoop(loop.path);
  writeFileSync(join(dir, 'password'), 'a password\n');
  writeFileSync(join(dir, 'wifi-password'), 'a passphrase\n');
  const key = sshKeyPair(dir).publicKey;
  const flags = [
    `--hostname pi-{n} --user alice --password-file ${join(dir, 'password')} --ssh-key ${key}`,
    `--wifi-ssid Lab --wifi-password-file ${join(dir, 'wifi-password')} --wifi-country GB --timezone Europe/London --keymap gb`,
  ].join(' ');
  const lines = [
    `### Customisation: Raspberry Pi OS-like image (${(LAYOUT_IMAGE_SIZE / 1024 / 1024).toFixed(0)} MiB, 48 MiB FAT32 boot), write + verify, loop device on /dev/shm (median of ${runs})`,
    '',
    '| image | plain flash s | customised flash s | cost of customising s |',
    '|---|---:|---:|---:|',
  ];
  for (const source of [image, `${image}.xz`]) {
    const plain = await medianOf(runs, () => measure(`${NODE} ${CLI} flash --yes --no-eject ${source} ${loop.path}`));
    const customised = await medianOf(runs, () =>
      measure(`${NODE} ${CLI} flash --yes --no-eject ${flags} ${source} ${loop.path}`),
    );
    lines.push(
      `| ${source.endsWith('.xz') ? '.img.xz' : '.img (raw)'} | ${plain.wallSeconds.toFixed(2)} | ${customised.wallSeconds.toFixed(2)} | ${(customised.wallSeconds - plain.wallSeconds).toFixed(2)} |`,
    );
  }
  return lines.join('\n');
}
