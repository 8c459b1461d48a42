/**
 * Customised cards boot and apply their settings: Debian systems laid out like Raspberry Pi OS and
 * like Ubuntu for Raspberry Pi (test/support/boot-image.ts: one debootstrap tree, a variant per
 * image, each kept in a cache under /var/tmp), flashed with every setting onto loop devices and
 * booted in QEMU (TCG) with their kernel and the card's own cmdline.txt, as the Pi firmware boots
 * them; firstrun's cards through its reboot. Every setting is then checked over SSH with the key.
 * The cards boot at once, each in its own QEMU (768 MiB): each guest is one emulated CPU, one host
 * thread, so one after another would leave a core idle.
 *
 * Each image's cmdline.txt and config.txt are over one 512-byte cluster, and the three compressed
 * formats are each booted once: every byte of the command line must survive for the card to boot.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { firstRunArguments, FIRSTRUN_REPORT } from '../../user/customise/firstrun.js';
import { wifiPsk } from '../../user/customise/secrets.js';
import { assertTestTarget, collect, flashCli, resultsOf, spawnCli } from '../support/cli.js';
import { glibcCrypt, sshKeyPair } from '../support/customisation.js';
import { describeDevices } from '../support/device-suite.js';
import {
  BOOT_CMDLINE,
  BOOT_IMAGE_CACHE,
  BOOT_OFFSET,
  bootImage,
  compressedImage,
  IMAGE_SIZE,
  ROOT_OFFSET,
  type BootImage,
  type BootImageRecipe,
} from '../support/boot-image.js';
import { createLoop, type LoopDevice } from '../support/loop-device.js';

const PASSWORD = 'c0rrect-h0rse "battery"';
const WIFI_PASSPHRASE = 'staple horse battery';
const SSID = 'lab';
/**
 * A boot of this TCG guest takes about 1.5 minutes on an idle machine; a first boot that applies
 * the settings, more; four at once at nice 10 on two cores that the other test worker comes first
 * on, several times that (the cloud-init guest reached SSH in 900 s in CI's run).
 */
const BOOT_TIMEOUT_MS = 30 * 60_000;
const TEST_TIMEOUT_MS = 60 * 60_000;
/** ssh's exit status when the connection, not the command, failed. */
const SSH_FAILED = 255;
/** How long a refused connection is asked again: sshd's restart by cloud-config took 2 s idle, and its guest is up to ten times slower in CI. */
const SSH_RETRY_MS = 3 * 60_000;

/** The images, by what they test; each is a variant of the one debootstrap tree. */
const RECIPES = {
  firmware: {
    name: 'firmware.img',
    bootDir: '/boot/firmware',
    trimmedConfig: true,
    firstUser: false,
    cloudInit: false,
  },
  piUser: { name: 'pi-user.img', bootDir: '/boot', trimmedConfig: false, firstUser: true, cloudInit: false },
  ubuntu: { name: 'ubuntu.img', bootDir: '/boot/firmware', trimmedConfig: true, firstUser: false, cloudInit: true },
} as const satisfies Record<string, BootImageRecipe>;

const making = new Map<keyof typeof RECIPES, Promise<BootImage>>();
let lastMade: Promise<unknown> = Promise.resolve();

/**
 * The image of a recipe, made once and one after another (each is a disk's work and a core's), so
 * the first card boots while the next image is made.
 */
function made(name: keyof typeof RECIPES): Promise<BootImage> {
  const known = making.get(name);
  if (known !== undefined) return known;
  const image = lastMade.then(async () => {
    const system = await bootImage(RECIPES[name]);
    const { debootstrapSeconds, makeSeconds } = system;
    console.info(
      `${name} image: debootstrap ${debootstrapSeconds.toFixed(0)} s, made ${makeSeconds.toFixed(0)} s (0: cached)`,
    );
    return system;
  });
  lastMade = image.catch(() => undefined);
  making.set(name, image);
  return image;
}

/** A file of the card's boot partition, read with mtools. */
function bootFile(device: string, name: string): string {
  return execFileSync('mtype', ['-i', `${device}@@${BOOT_OFFSET}`, `::/${name}`], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  });
}

/** A file of the card's root filesystem, read with debugfs (no mount); '' when there is none. */
function rootFile(device: string, path: string): string {
  return execFileSync('debugfs', ['-R', `cat ${path}`, `${device}?offset=${ROOT_OFFSET}`], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  });
}

/** Boots the card in QEMU with the kernel and the card's cmdline.txt; `exited` resolves when QEMU exits (a reboot ends it: -no-reboot). */
function boot(
  card: LoopDevice,
  files: { kernel: string; initrd: string },
  log: string,
  sshPort: number,
): { exited: Promise<number | null>; stop: () => void } {
  const cmdline = bootFile(card.path, 'cmdline.txt').split('\n')[0] ?? '';
  // q35 has no floppy controller: the default machine's empty one is probed, and fails, several times a boot.
  // At a lower priority: the guests take what CPU the other test worker leaves, and its tests,
  // some of which hold a bound of seconds, are not slowed by four guests on two cores.
  // prettier-ignore
  const qemu = spawn('nice', [
    '-n', '10', 'qemu-system-x86_64',
    '-machine', 'q35', '-accel', 'tcg', '-m', '768', '-smp', '1', '-no-reboot', '-display', 'none', '-serial', `file:${log}`,
    '-kernel', files.kernel, '-initrd', files.initrd, '-append', cmdline,
    '-drive', `file=${card.path},format=raw,if=virtio,cache=none`,
    '-netdev', `user,id=net0,hostfwd=tcp:127.0.0.1:${sshPort}-:22`, '-device', 'virtio-net-pci,netdev=net0',
  ], { stdio: 'ignore' });
  const exited = new Promise<number | null>((resolve) => qemu.on('exit', (code) => resolve(code)));
  return { exited, stop: () => qemu.kill('SIGKILL') };
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([
    promise,
    new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`${what} took more than ${ms / 1000} s`)), ms)),
  ]);
}

describeDevices('customised cards boot and are reachable', () => {
  let dir: string;
  let keys: { privateKey: string; publicKey: string };
  const logs: string[] = [];

  beforeAll(() => {
    dir = mkdtempSync('/var/tmp/sluice-boot-test-');
    keys = sshKeyPair(dir, 'ed25519', 'tester@sluice');
    writeFileSync(join(dir, 'password'), `${PASSWORD}\n`);
    writeFileSync(join(dir, 'wifi-password'), `${WIFI_PASSPHRASE}\n`);
  });

  afterAll(() => {
    // The guests' serial logs stay beside the cached tree, for a failure to be read.
    for (const log of logs)
      if (existsSync(join(dir, log))) copyFileSync(join(dir, log), join(BOOT_IMAGE_CACHE, `last-${log}`));
    rmSync(dir, { recursive: true, force: true });
  });

  /** Every setting, the host name and the keymap as given; secrets from files, never on the command line. */
  function settings(hostname: string, keymap: string): string[] {
    // prettier-ignore
    return [
      '--no-eject', '--hostname', hostname, '--user', 'alice', '--password-file', join(dir, 'password'),
      '--ssh-key', keys.publicKey, '--wifi-ssid', SSID, '--wifi-password-file', join(dir, 'wifi-password'),
      '--wifi-country', 'DE', '--timezone', 'Europe/Berlin', '--keymap', keymap,
    ];
  }

  /** A fresh card with `image` flashed onto it, customised; its cmdline.txt checked byte for byte where firstrun writes it. */
  async function flashed(image: string, flags: string[], firstrun: boolean): Promise<LoopDevice> {
    const card = createLoop({ size: IMAGE_SIZE + 16 * 1024 * 1024, dir, fill: 'sparse' });
    const run = await flashCli(image, [card.path], flags);
    expect(run.code, run.stderr).toBe(0);
    expect(resultsOf(run).get(card.path)).toMatchObject({ status: 'ok', verified: true, customised: true });
    const args = firstrun ? ['cfg80211.ieee80211_regdom=DE', ...firstRunArguments()] : [];
    expect(bootFile(card.path, 'cmdline.txt')).toBe(`${[BOOT_CMDLINE.trimEnd(), ...args].join(' ')}\n`);
    return card;
  }

  /** A card to boot: its name (for its logs), the system it was flashed with, and the host port of its SSH. */
  interface Guest {
    name: string;
    card: LoopDevice;
    system: BootImage;
    port: number;
  }

  /** One SSH run of `command` on the guest as alice with the key; stdin, when given, carries what must not be on a command line. */
  function sshOnce(
    port: number,
    command: string,
    input?: string,
    timeout = 60_000,
  ): { status: number | null; stdout: string } {
    // prettier-ignore
    const run = spawnSync('ssh', [
      '-i', keys.privateKey, '-p', String(port), '-o', 'BatchMode=yes', '-o', 'StrictHostKeyChecking=no',
      '-o', 'UserKnownHostsFile=/dev/null', '-o', 'ConnectTimeout=5', '-o', 'LogLevel=ERROR', 'alice@127.0.0.1', command,
    ], { encoding: 'utf8', input: input ?? '', timeout });
    return { status: run.status, stdout: run.stdout };
  }

  /**
   * `command` on a guest whose SSH has answered. A connection that fails (ssh's own status, 255) is
   * asked again for a while: cloud-config restarts sshd when it sets ssh_pwauth, after SSH first
   * answers, and a connection made in that moment is refused.
   */
  function ssh(
    port: number,
    command: string,
    input?: string,
    timeout?: number,
  ): { status: number | null; stdout: string } {
    const deadline = Date.now() + SSH_RETRY_MS;
    for (;;) {
      const run = sshOnce(port, command, input, timeout);
      if (run.status !== SSH_FAILED || Date.now() > deadline) return run;
      console.info(`ssh to port ${port} failed (status 255); asked again in 3 s: ${command}`);
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 3000);
    }
  }

  /** firstrun's boot: QEMU until the script's reboot ends it; the card never powers itself off. Its seconds. */
  async function firstBoot({ name, card, system, port }: Guest): Promise<number> {
    const started = Date.now();
    logs.push(`${name}-first-boot.log`);
    const first = boot(card, system, join(dir, `${name}-first-boot.log`), port);
    await withTimeout(first.exited, BOOT_TIMEOUT_MS, `${name}'s first boot`).finally(first.stop);
    const log = readFileSync(join(dir, `${name}-first-boot.log`), 'utf8');
    expect(log).not.toMatch(/Doing "poweroff" action|Failed to locate executable/);
    return (Date.now() - started) / 1000;
  }

  /** Boots the card and runs `check` once SSH answers with the key; the seconds until it did. */
  async function overSsh({ name, card, system, port }: Guest, check: () => void): Promise<number> {
    const started = Date.now();
    logs.push(`${name}-boot.log`);
    const running = boot(card, system, join(dir, `${name}-boot.log`), port);
    try {
      await withTimeout(
        (async () => {
          while (sshOnce(port, 'true').status !== 0) await new Promise((resolve) => setTimeout(resolve, 3000));
        })(),
        BOOT_TIMEOUT_MS,
        `SSH on ${name}`,
      );
      const seconds = (Date.now() - started) / 1000;
      check();
      return seconds;
    } finally {
      running.stop();
      await running.exited;
    }
  }

  /** `sluice verify --customisation` on the card: its exit code and what it says. */
  async function readBack(card: LoopDevice): Promise<{ code: number | null; stdout: string }> {
    assertTestTarget(card.path);
    return collect(spawnCli(['verify', '--customisation', card.path]));
  }

  /** The settings every card gets, checked over SSH: user and sudo with the password, its hash, time zone, Wi-Fi. */
  function checkCommonSettings(port: number, hostname: string, wifiFile: string, wifiLine: string): void {
    expect(ssh(port, 'hostname').stdout.trim()).toBe(hostname);
    expect(ssh(port, 'id -nG').stdout.trim().split(' ')).toContain('sudo');
    // The password, on sudo's stdin: it proves the hash and sudo at once.
    expect(ssh(port, "sudo -S -p '' true", `${PASSWORD}\n`).status).toBe(0);
    const hash = ssh(port, "sudo -S -p '' getent shadow alice", `${PASSWORD}\n`).stdout.split(':')[1] ?? '';
    expect(glibcCrypt(PASSWORD, hash)).toBe(hash);
    expect(
      ssh(port, 'cat /etc/timezone; cmp /etc/localtime /usr/share/zoneinfo/Europe/Berlin && echo same').stdout,
    ).toBe('Europe/Berlin\nsame\n');
    const wifi = ssh(port, `sudo -S -p '' cat ${wifiFile}`, `${PASSWORD}\n`).stdout;
    expect(wifi).toContain(wifiLine);
    expect(wifi).not.toContain(WIFI_PASSPHRASE);
  }

  /** firstrun's own results: the keymap, the Wi-Fi as wpa_supplicant reads it, the script and its arguments gone. */
  function checkFirstRun(port: number, hostname: string, bootDir: string): void {
    checkCommonSettings(
      port,
      hostname,
      '/etc/wpa_supplicant/wpa_supplicant.conf',
      `\tpsk=${wifiPsk(WIFI_PASSPHRASE, SSID)}\n`,
    );
    expect(ssh(port, 'grep XKBLAYOUT /etc/default/keyboard').stdout.trim()).toBe('XKBLAYOUT="de"');
    expect(ssh(port, `test -e ${bootDir}/firstrun.sh || echo gone; grep -c systemd.run /proc/cmdline`).stdout).toBe(
      'gone\n0\n',
    );
  }

  /**
   * cloud-init's own results: it finished without an error, the keymap through localectl, and the
   * Wi-Fi as netplan hands it to wpa_supplicant for wlan0 (the PSK, never the passphrase), with the
   * regulatory domain set.
   */
  function checkCloudInit(port: number): void {
    // SSH answers before cloud-init's last stage has run: its status is waited for.
    const status = ssh(port, 'cloud-init status --wait --long', undefined, BOOT_TIMEOUT_MS);
    expect(status.stdout, `ssh's exit status ${status.status}`).toMatch(/^status: done$/m);
    expect(status.status, status.stdout).toBe(0);
    const psk = wifiPsk(WIFI_PASSPHRASE, SSID);
    checkCommonSettings(port, 'cloudy', '/etc/netplan/50-cloud-init.yaml', `password: ${psk}\n`);
    expect(ssh(port, 'grep XKBLAYOUT /etc/default/keyboard').stdout.trim()).toBe('XKBLAYOUT=de');
    const supplicant = ssh(port, "sudo -S -p '' cat /run/netplan/wpa-wlan0.conf", `${PASSWORD}\n`).stdout;
    expect(supplicant).toContain(`ssid="${SSID}"`);
    expect(supplicant).toContain(`psk=${psk}`);
    expect(supplicant).not.toContain(WIFI_PASSPHRASE);
    expect(ssh(port, 'systemctl is-active netplan-wpa-wlan0.service').stdout).toBe('active\n');
    expect(ssh(port, "sudo -S -p '' /usr/sbin/iw reg get", `${PASSWORD}\n`).stdout).toMatch(/^country DE:/m);
  }

  /** A firstrun card from boot to SSH: the first boot applies, the report says so, the second boot is checked. */
  async function firstRunCard(guest: Guest, check: () => void): Promise<void> {
    const first = await firstBoot(guest);
    expect(bootFile(guest.card.path, 'cmdline.txt')).toBe(
      BOOT_CMDLINE.replace('\n', ' cfg80211.ieee80211_regdom=DE\n'),
    );
    const report = await readBack(guest.card);
    expect(report.code, report.stdout).toBe(0);
    expect(report.stdout).toContain('Every setting applied (6).');
    const second = await overSsh(guest, check);
    console.info(
      `${guest.name}: first boot (firstrun.sh and reboot) ${first.toFixed(0)} s; second boot to SSH ${second.toFixed(0)} s`,
    );
  }

  /** A port of its own for each guest's SSH, per test run. */
  const port = (n: number) => 20000 + (process.pid % 10000) * 4 + n;

  it.concurrent(
    'no uid-1000 user and no gpio group, FAT at /boot/firmware, trimmed config.txt, from .zst: the user is made, reachable by key',
    async () => {
      const system = await made('firmware');
      const card = await flashed(await compressedImage(system.image, 'zst'), settings('booted-{n}', 'de'), true);
      await firstRunCard({ name: 'firmware', card, system, port: port(0) }, () => {
        checkFirstRun(port(0), 'booted-1', '/boot/firmware');
        // The image has no gpio group (Debian has none): the user was made in the groups it has.
        expect(ssh(port(0), 'getent group gpio; getent passwd 1000 | cut -d: -f1,6').stdout).toBe(
          'alice:/home/alice\n',
        );
      });
    },
    TEST_TIMEOUT_MS,
  );

  it.concurrent(
    'a uid-1000 user, FAT at /boot, from .xz: the user renamed, every setting applied',
    async () => {
      const system = await made('piUser');
      const card = await flashed(await compressedImage(system.image, 'xz'), settings('renamed', 'de'), true);
      await firstRunCard({ name: 'pi-user', card, system, port: port(1) }, () => {
        checkFirstRun(port(1), 'renamed', '/boot');
        expect(ssh(port(1), 'getent passwd 1000 | cut -d: -f1,6; getent passwd pi || echo no pi').stdout).toBe(
          'alice:/home/alice\nno pi\n',
        );
      });
    },
    TEST_TIMEOUT_MS,
  );

  it.concurrent(
    'an unknown keymap, from .gz: that step fails alone, the others apply, and Sluice shows it from the card',
    async () => {
      const system = await made('firmware');
      const card = await flashed(await compressedImage(system.image, 'gz'), settings('keymap-fails', 'zz'), true);
      const seconds = await firstBoot({ name: 'keymap-fails', card, system, port: port(2) });
      const report = await readBack(card);
      expect(report.code).toBe(1);
      expect(report.stdout).toMatch(
        /\n {2}FAILED {3}keymap \(exit status 1; the journal of this boot has its output\)\n/,
      );
      for (const step of ['hostname', 'user', 'ssh', 'wifi', 'timezone'])
        expect(report.stdout).toContain(`\n  applied  ${step}\n`);
      expect(report.stdout).toContain('1 of 6 settings did not apply: keymap. The others did.');
      expect(bootFile(card.path, FIRSTRUN_REPORT)).toMatch(/\nFAILED keymap /);
      // The others, in the card's root filesystem as the first boot left it.
      expect(rootFile(card.path, '/etc/hostname')).toBe('keymap-fails\n');
      expect(rootFile(card.path, '/home/alice/.ssh/authorized_keys')).toBe(readFileSync(keys.publicKey, 'utf8'));
      expect(rootFile(card.path, '/etc/timezone')).toBe('Europe/Berlin\n');
      expect(rootFile(card.path, '/etc/wpa_supplicant/wpa_supplicant.conf')).toContain(
        `psk=${wifiPsk(WIFI_PASSPHRASE, SSID)}`,
      );
      expect(rootFile(card.path, '/etc/default/keyboard')).not.toContain('zz');
      console.info(`keymap-fails: first boot ${seconds.toFixed(0)} s`);
    },
    TEST_TIMEOUT_MS,
  );

  it.concurrent(
    'Ubuntu-like, cloud-init from the FAT labelled system-boot (NoCloud), raw: every setting through its own modules',
    async () => {
      const system = await made('ubuntu');
      const card = await flashed(system.image, settings('cloudy', 'de'), false);
      const seconds = await overSsh({ name: 'ubuntu', card, system, port: port(3) }, () => checkCloudInit(port(3)));
      console.info(`ubuntu: one boot to SSH ${seconds.toFixed(0)} s`);
    },
    TEST_TIMEOUT_MS,
  );
});
