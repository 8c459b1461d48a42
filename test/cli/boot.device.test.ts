/**
 * A customised card boots and applies its settings: a Debian system laid out like Raspberry Pi OS
 * (test/support/boot-image.ts), flashed from .zst with every setting onto a loop device, booted
 * in QEMU (TCG) with its kernel and the card's own cmdline.txt, as the Pi firmware boots it,
 * through firstrun's reboot, then checked over SSH with the key. The image has no uid-1000 user,
 * mounts its FAT at /boot/firmware and has a config.txt that does not say so: the case that
 * left cards unreachable, or powered off on every boot.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { flashCli, resultsOf } from '../support/cli.js';
import { glibcCrypt, sshKeyPair } from '../support/customisation.js';
import { describeDevices } from '../support/device-suite.js';
import { BOOT_CMDLINE, BOOT_IMAGE_CACHE, BOOT_OFFSET, bootImage, IMAGE_SIZE } from '../support/boot-image.js';
import { createLoop, type LoopDevice } from '../support/loop-device.js';
import { wifiPsk } from '../../user/customise/secrets.js';

const PASSWORD = 'c0rrect-h0rse "battery"';
const WIFI_PASSPHRASE = 'staple horse battery';
const SSID = 'lab';
/**
 * A boot of this TCG guest takes about 1.5 minutes on an idle machine; a first boot that applies
 * the settings, more; on two cores shared with other test runs, one took over 6 minutes.
 */
const BOOT_TIMEOUT_MS = 15 * 60_000;

/** A file of the card's boot partition, read with mtools. */
function bootFile(device: string, name: string): string {
  return execFileSync('mtype', ['-i', `${device}@@${BOOT_OFFSET}`, `::/${name}`], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  });
}

/** Boots the card in QEMU with the kernel and the card's cmdline.txt; resolves when QEMU exits (a reboot ends it: -no-reboot). */
function boot(
  card: LoopDevice,
  files: { kernel: string; initrd: string },
  log: string,
  sshPort: number,
): { exited: Promise<number | null>; stop: () => void } {
  const cmdline = bootFile(card.path, 'cmdline.txt').split('\n')[0] ?? '';
  const qemu = spawn(
    'qemu-system-x86_64',
    [
      '-accel',
      'tcg',
      '-m',
      '768',
      '-smp',
      '1',
      '-no-reboot',
      '-display',
      'none',
      '-serial',
      `file:${log}`,
      '-kernel',
      files.kernel,
      '-initrd',
      files.initrd,
      '-append',
      cmdline,
      '-drive',
      `file=${card.path},format=raw,if=virtio,cache=none`,
      '-netdev',
      `user,id=net0,hostfwd=tcp:127.0.0.1:${sshPort}-:22`,
      '-device',
      'virtio-net-pci,netdev=net0',
    ],
    { stdio: 'ignore' },
  );
  const exited = new Promise<number | null>((resolve) => qemu.on('exit', (code) => resolve(code)));
  return { exited, stop: () => qemu.kill('SIGKILL') };
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([
    promise,
    new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`${what} took more than ${ms / 1000} s`)), ms)),
  ]);
}

describeDevices('a customised card boots and is reachable', () => {
  let dir: string;
  let files: { image: string; kernel: string; initrd: string; debootstrapSeconds: number };
  let keys: { privateKey: string; publicKey: string };
  let flags: string[];

  beforeAll(() => {
    dir = mkdtempSync('/var/tmp/sluice-boot-test-');
    const started = Date.now();
    files = bootImage(dir, { bootDir: '/boot/firmware', trimmedConfig: true, firstUser: false });
    execFileSync('zstd', ['-q', '-1', '-T2', '--rm', files.image, '-o', `${files.image}.zst`]);
    console.info(
      `boot image: debootstrap ${files.debootstrapSeconds.toFixed(0)} s (0: cached), image and .zst ${((Date.now() - started) / 1000).toFixed(0)} s in all`,
    );
    keys = sshKeyPair(dir, 'ed25519', 'tester@sluice');
    writeFileSync(join(dir, 'password'), `${PASSWORD}\n`);
    writeFileSync(join(dir, 'wifi-password'), `${WIFI_PASSPHRASE}\n`);
    flags = [
      '--no-eject',
      '--hostname',
      'booted-{n}',
      '--user',
      'alice',
      '--password-file',
      join(dir, 'password'),
      '--ssh-key',
      keys.publicKey,
      '--wifi-ssid',
      SSID,
      '--wifi-password-file',
      join(dir, 'wifi-password'),
      '--wifi-country',
      'DE',
      '--timezone',
      'Europe/Berlin',
      '--keymap',
      'de',
    ];
  }, 40 * 60_000);

  afterAll(() => {
    // The guest's serial logs stay beside the cached images, for a failure to be read.
    for (const log of ['first-boot.log', 'second-boot.log'])
      if (existsSync(join(dir, log))) copyFileSync(join(dir, log), join(BOOT_IMAGE_CACHE, `last-${log}`));
    rmSync(dir, { recursive: true, force: true });
  });

  /** Runs `command` on the guest over SSH as alice with the key; stdin, when given, carries what must not be on a command line. */
  function ssh(port: number, command: string, input?: string): { status: number | null; stdout: string } {
    const run = spawnSync(
      'ssh',
      [
        '-i',
        keys.privateKey,
        '-p',
        String(port),
        '-o',
        'BatchMode=yes',
        '-o',
        'StrictHostKeyChecking=no',
        '-o',
        'UserKnownHostsFile=/dev/null',
        '-o',
        'ConnectTimeout=5',
        '-o',
        'LogLevel=ERROR',
        'alice@127.0.0.1',
        command,
      ],
      { encoding: 'utf8', input: input ?? '', timeout: 30_000 },
    );
    return { status: run.status, stdout: run.stdout };
  }

  it(
    'no uid-1000 user, FAT at /boot/firmware, trimmed config.txt, from .zst: boots, applies every setting, reachable by key',
    async () => {
      const card = createLoop({ size: IMAGE_SIZE + 16 * 1024 * 1024, dir, fill: 'sparse' });
      const flashed = await flashCli(`${files.image}.zst`, [card.path], flags);
      expect(flashed.code, flashed.stderr).toBe(0);
      expect(resultsOf(flashed).get(card.path)).toMatchObject({ status: 'ok', verified: true, customised: true });
      expect(bootFile(card.path, 'cmdline.txt').startsWith(BOOT_CMDLINE.trimEnd())).toBe(true);

      const port = 20000 + (process.pid % 20000);
      const firstStarted = Date.now();
      const first = boot(card, files, join(dir, 'first-boot.log'), port);
      // firstrun.sh ends the first boot with a reboot, which ends QEMU (-no-reboot).
      await withTimeout(first.exited, BOOT_TIMEOUT_MS, 'the first boot').finally(first.stop);
      const firstSeconds = (Date.now() - firstStarted) / 1000;
      const firstLog = readFileSync(join(dir, 'first-boot.log'), 'utf8');
      expect(firstLog).not.toMatch(/Doing "poweroff" action|Failed to locate executable/);
      expect(bootFile(card.path, 'cmdline.txt')).toBe(BOOT_CMDLINE.replace('\n', ' cfg80211.ieee80211_regdom=DE\n'));
      expect(bootFile(card.path, 'sluice-firstrun.txt')).toMatch(
        /^Sluice first boot: \S+\napplied hostname\napplied user\napplied ssh\napplied wifi\napplied timezone\napplied keymap\n$/,
      );

      const secondStarted = Date.now();
      const second = boot(card, files, join(dir, 'second-boot.log'), port);
      try {
        await withTimeout(
          (async () => {
            while (ssh(port, 'true').status !== 0) await new Promise((resolve) => setTimeout(resolve, 3000));
          })(),
          BOOT_TIMEOUT_MS,
          'SSH on the second boot',
        );
        const secondSeconds = (Date.now() - secondStarted) / 1000;
        console.info(
          `first boot (firstrun.sh and reboot) ${firstSeconds.toFixed(0)} s; second boot to SSH ${secondSeconds.toFixed(0)} s`,
        );
        expect(ssh(port, 'hostname').stdout.trim()).toBe('booted-1');
        expect(ssh(port, 'id -nG').stdout.trim().split(' ')).toContain('sudo');
        // The password, on sudo's stdin: it proves the hash and sudo at once.
        expect(ssh(port, "sudo -S -p '' true", `${PASSWORD}\n`).status).toBe(0);
        const hash = ssh(port, "sudo -S -p '' getent shadow alice", `${PASSWORD}\n`).stdout.split(':')[1] ?? '';
        expect(glibcCrypt(PASSWORD, hash)).toBe(hash);
        expect(ssh(port, 'readlink /etc/localtime; cat /etc/timezone').stdout).toBe(
          '/usr/share/zoneinfo/Europe/Berlin\nEurope/Berlin\n',
        );
        expect(ssh(port, 'grep XKBLAYOUT /etc/default/keyboard').stdout.trim()).toBe('XKBLAYOUT="de"');
        const wpa = ssh(port, "sudo -S -p '' cat /etc/wpa_supplicant/wpa_supplicant.conf", `${PASSWORD}\n`).stdout;
        expect(wpa).toContain(`\tpsk=${wifiPsk(WIFI_PASSPHRASE, SSID)}\n`);
        expect(wpa).not.toContain(WIFI_PASSPHRASE);
        expect(
          ssh(port, 'test -e /boot/firmware/firstrun.sh || echo gone; grep -c systemd.run /proc/cmdline').stdout,
        ).toBe('gone\n0\n');
      } finally {
        second.stop();
        await second.exited;
      }
    },
    40 * 60_000,
  );
});
