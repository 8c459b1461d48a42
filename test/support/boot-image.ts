/**
 * Small bootable images for the boot tests, made from one Debian system that debootstrap builds
 * once and that is kept under /var/tmp (on disk: it is about 1 GB), keyed by a hash of its recipe,
 * so a change of the recipe makes a new one. Each image, and each compressed copy of it, is kept
 * there too, keyed by the builder's own source and the image's recipe: a second run makes
 * nothing. Each variant is a copy of the tree, edited: laid out like
 * Raspberry Pi OS (cloud-init off) or like Ubuntu for Raspberry Pi (cloud-init reading its NoCloud
 * seed from the FAT labelled system-boot). The image has an MBR, a FAT32 boot partition with
 * 512-byte clusters holding a cmdline.txt and a config.txt each over one cluster, and an ext4 root;
 * its kernel and initrd are kept beside it, for QEMU to load as the Pi firmware loads them from the
 * card.
 */
import { createHash } from 'node:crypto';
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { MiB } from '../../common/domain/units.js';
import { UBUNTU_NETWORK_CONFIG, UBUNTU_USER_DATA } from './os-image.js';

export const BOOT_IMAGE_CACHE = '/var/tmp/sluice-boot-images';
const SUITE = 'bookworm';
const MIRROR = 'http://deb.debian.org/debian';
const PACKAGES = [
  'linux-image-amd64',
  'initramfs-tools',
  'systemd-sysv',
  'udev',
  'openssh-server',
  'sudo',
  'keyboard-configuration',
  'console-setup',
  'xkb-data',
  'tzdata',
  'iproute2',
  'ifupdown',
  'isc-dhcp-client',
  'kmod',
  'passwd',
  'login',
  'dbus',
  'cloud-init',
  // debootstrap resolves no virtual package: python3-cryptography's cffi API is this one's.
  'python3-cffi-backend',
  'netplan.io',
  // What netplan needs for the Wi-Fi, as Ubuntu for Raspberry Pi has it: wpa_supplicant for the
  // network, iw and the regulatory database for the regulatory domain.
  'wpasupplicant',
  'iw',
  'wireless-regdb',
];

/** The disk identifier of the image's MBR: root=PARTUUID=5e3da3da-02, as Raspberry Pi OS names it. */
export const DISK_ID = '5e3da3da';
export const BOOT_OFFSET = 4 * MiB;
const BOOT_SIZE = 64 * MiB;
/** Where the root partition starts: right after the boot partition. */
export const ROOT_OFFSET = BOOT_OFFSET + BOOT_SIZE;
const ROOT_SIZE = 1024 * MiB;
export const IMAGE_SIZE = ROOT_OFFSET + ROOT_SIZE;

/** How the image differs from Raspberry Pi OS. */
export interface BootImageRecipe {
  /** The raw image's file name. */
  name: string;
  /** Where the running system mounts the boot partition. */
  bootDir: '/boot' | '/boot/firmware';
  /** config.txt without any mention of where the boot partition is mounted (as derivatives trim it). */
  trimmedConfig: boolean;
  /** A first user with uid 1000 ("pi"), as Raspberry Pi OS has; false: no user at all. */
  firstUser: boolean;
  /**
   * Laid out like Ubuntu for Raspberry Pi: cloud-init on, its NoCloud seed (user-data, meta-data,
   * network-config) on the FAT labelled system-boot, netplan and systemd-networkd bringing up the
   * network it describes (no other). False: cloud-init off, ifupdown's DHCP on eth0.
   */
  cloudInit: boolean;
}

/**
 * The card's command line: the serial console QEMU shows, the root by PARTUUID, systemd's start
 * timeout raised from 90 s to 10 minutes (TCG guests on busy cores are that slow), then harmless
 * arguments that make it longer than a 512-byte cluster (each names its place, so a lost or moved
 * byte shows).
 */
export const BOOT_CMDLINE = `console=ttyS0,115200 root=PARTUUID=${DISK_ID}-02 rootfstype=ext4 fsck.repair=yes rootwait net.ifnames=0 systemd.default_timeout_start_sec=600 ${Array.from({ length: 40 }, (_, i) => `sluice.pad${i}=${String(i).padStart(4, '0')}`).join(' ')}\n`;

/** config.txt, over one 512-byte cluster; the mount point named only past the first, where one is named. */
function configText(recipe: BootImageRecipe): string {
  const padding = '# padding, so that what follows lies past the first 512-byte cluster\n'.repeat(10);
  const overlays = recipe.trimmedConfig
    ? ''
    : `# Additional overlays and parameters are documented\n# ${recipe.bootDir}/overlays/README\n`;
  return `${padding}${overlays}arm_64bit=1\ndtparam=audio=on\n`;
}

/** cloud-init's own settings in an Ubuntu-like image: the seed on the FAT by its label, rendered by netplan. */
const CLOUD_CFG = `datasource_list: [NoCloud, None]
datasource:
  NoCloud:
    fs_label: system-boot
system_info:
  network:
    renderers: [netplan]
`;

/**
 * What a QEMU guest never uses, left out of the cached tree (so of every image): debootstrap's
 * downloaded packages, documentation, translations, and the kernel's drivers for sound, graphics,
 * radios and other hardware QEMU does not give it. It takes the tree from 960 to about 530 MB,
 * and so halves each image's making, compression, flash and read-back.
 */
const UNUSED_PATHS = ['var/cache/apt/archives', 'usr/share/doc', 'usr/share/man', 'usr/share/locale'];
// prettier-ignore
const UNUSED_MODULES = [
  'sound', 'drivers/gpu', 'drivers/media', 'drivers/net/ethernet', 'drivers/infiniband',
  'drivers/staging', 'drivers/bluetooth', 'drivers/iio', 'drivers/isdn', 'drivers/usb', 'drivers/hwmon',
];
/** Of the radio drivers, only mac80211_hwsim stays (in `virtual/` on newer kernels): a simulated Wi-Fi card. */
const RADIOS = 'drivers/net/wireless';
const SIMULATED_RADIO = /^(mac80211_hwsim\.ko|virtual$)/;

/** Removes the unused files from `tree`, and lists the kernel modules that are left (depmod). */
function slim(tree: string): void {
  for (const path of UNUSED_PATHS) rmSync(join(tree, path), { recursive: true, force: true });
  const modules = join(tree, 'usr/lib/modules');
  for (const version of readdirSync(modules)) {
    const kernel = join(modules, version, 'kernel');
    for (const path of UNUSED_MODULES) rmSync(join(kernel, path), { recursive: true, force: true });
    for (const entry of readdirSync(join(kernel, RADIOS)))
      if (!SIMULATED_RADIO.test(entry)) rmSync(join(kernel, RADIOS, entry), { recursive: true, force: true });
    execFileSync('chroot', [tree, 'depmod', '-a', version]);
  }
}

/** A Debian root filesystem made by debootstrap, cached by its recipe; the time it took when it was made, else 0. */
export function debootstrapRoot(): { dir: string; seconds: number } {
  const key = createHash('sha256')
    .update(
      JSON.stringify({ SUITE, MIRROR, PACKAGES, UNUSED_PATHS, UNUSED_MODULES, SIMULATED_RADIO: `${SIMULATED_RADIO}` }),
    )
    .digest('hex')
    .slice(0, 16);
  const dir = join(BOOT_IMAGE_CACHE, `rootfs-${key}`);
  if (existsSync(join(dir, 'etc', 'os-release'))) return { dir, seconds: 0 };
  mkdirSync(BOOT_IMAGE_CACHE, { recursive: true });
  const building = `${dir}.building-${process.pid}`;
  rmSync(building, { recursive: true, force: true });
  const started = Date.now();
  execFileSync('debootstrap', ['--variant=minbase', `--include=${PACKAGES.join(',')}`, SUITE, building, MIRROR], {
    stdio: 'ignore',
    timeout: 30 * 60_000,
  });
  slim(building);
  renameSync(building, dir);
  for (const old of readdirSync(BOOT_IMAGE_CACHE))
    if (old.startsWith('rootfs-') && old !== `rootfs-${key}`)
      rmSync(join(BOOT_IMAGE_CACHE, old), { recursive: true, force: true });
  return { dir, seconds: (Date.now() - started) / 1000 };
}

/** Writes `text` to `path` under `root`, making its directory. */
function put(root: string, path: string, text: string): void {
  mkdirSync(join(root, path, '..'), { recursive: true });
  writeFileSync(join(root, path), text);
}

/** The system's own files for `recipe`: fstab, the network, cloud-init on or off, a host name; the first user where asked. */
function configure(tree: string, recipe: BootImageRecipe): void {
  put(
    tree,
    'etc/fstab',
    // The boot partition's device waited for 10 minutes, not 90 s: several TCG guests at once on two
    // busy cores took longer than that to see it, and stopped in the emergency shell.
    `PARTUUID=${DISK_ID}-02 / ext4 defaults,noatime 0 1\nPARTUUID=${DISK_ID}-01 ${recipe.bootDir} vfat defaults,x-systemd.device-timeout=10min 0 2\n`,
  );
  mkdirSync(join(tree, recipe.bootDir.slice(1)), { recursive: true });
  if (recipe.cloudInit) {
    put(tree, 'etc/cloud/cloud.cfg.d/99-ubuntu-like.cfg', CLOUD_CFG);
    // Ubuntu's images name their locale; with none, cloud-init's locale module generates en_US.UTF-8
    // with locale-gen's Ubuntu arguments, which Debian's locale-gen ignores, and fails.
    put(tree, 'etc/default/locale', 'LANG=C.UTF-8\n');
    // A Wi-Fi card, wlan0, as every Raspberry Pi with Wi-Fi has: netplan's wpa_supplicant for it
    // waits for the device, and the Wi-Fi settings are then read by what reads them on a Pi.
    put(tree, 'etc/modules-load.d/wifi.conf', 'mac80211_hwsim\n');
    put(tree, 'etc/modprobe.d/wifi.conf', 'options mac80211_hwsim radios=1\n');
    execFileSync('chroot', [tree, 'systemctl', 'enable', '--quiet', 'systemd-networkd'], { stdio: 'ignore' });
  } else {
    put(tree, 'etc/cloud/cloud-init.disabled', '');
    put(tree, 'etc/network/interfaces.d/eth0', 'auto eth0\niface eth0 inet dhcp\n');
  }
  put(tree, 'etc/hostname', 'raspberrypi\n');
  put(tree, 'etc/hosts', '127.0.0.1\tlocalhost\n127.0.1.1\traspberrypi\n');
  if (recipe.firstUser)
    execFileSync('chroot', [tree, 'useradd', '-m', '-u', '1000', '-s', '/bin/bash', '-G', 'sudo', 'pi']);
}

/** The FAT boot partition for `recipe`, as a file in `dir`: cmdline.txt, config.txt, and the seed where cloud-init reads one. */
function bootPartition(dir: string, recipe: BootImageRecipe): string {
  const boot = join(dir, `${recipe.name}.boot`);
  execFileSync('truncate', ['-s', String(BOOT_SIZE), boot]);
  const label = recipe.cloudInit ? 'system-boot' : 'bootfs';
  execFileSync('mkfs.vfat', ['-F', '32', '-s', '1', '-n', label, boot], { stdio: 'ignore' });
  const files: [string, string][] = [
    ['cmdline.txt', BOOT_CMDLINE],
    ['config.txt', configText(recipe)],
  ];
  if (recipe.cloudInit)
    files.push(
      ['meta-data', 'instance-id: cloud-image\n'],
      ['network-config', UBUNTU_NETWORK_CONFIG],
      ['user-data', UBUNTU_USER_DATA],
    );
  for (const [name, text] of files) {
    writeFileSync(join(dir, name), text);
    execFileSync('mcopy', ['-i', boot, join(dir, name), `::/${name}`]);
    rmSync(join(dir, name));
  }
  return boot;
}

const run = promisify(execFile);

/** Copies the partition file `part` into `image` at `offset`, and removes it. */
async function placePartition(part: string, image: string, offset: number): Promise<void> {
  // prettier-ignore
  await run('dd', [`if=${part}`, `of=${image}`, 'bs=4M', `seek=${offset / (4 * MiB)}`, 'conv=notrunc,sparse', 'status=none']);
  rmSync(part);
}

/** The raw image for `recipe`, made in `dir` from the root filesystem `rootfs` (copied: the cache stays as debootstrap left it). */
async function makeImage(dir: string, rootfs: string, recipe: BootImageRecipe): Promise<string> {
  const tree = join(dir, 'tree');
  await run('cp', ['-a', rootfs, tree]);
  configure(tree, recipe);
  const root = join(dir, 'root.part');
  await run('truncate', ['-s', String(ROOT_SIZE), root]);
  await run('mkfs.ext4', ['-q', '-F', '-L', 'rootfs', '-d', tree, root]);
  rmSync(tree, { recursive: true, force: true });
  const image = join(dir, recipe.name);
  await run('truncate', ['-s', String(IMAGE_SIZE), image]);
  execFileSync('sfdisk', ['--quiet', image], {
    input: `label: dos\nlabel-id: 0x${DISK_ID}\nstart=${BOOT_OFFSET / 512}, size=${BOOT_SIZE / 512}, type=c\nstart=${ROOT_OFFSET / 512}, type=83\n`,
  });
  await placePartition(bootPartition(dir, recipe), image, BOOT_OFFSET);
  await placePartition(root, image, ROOT_OFFSET);
  return image;
}

/** The builder's inputs: this file, the seed files it copies, and the recipe. */
function imageKey(rootfs: string, recipe: BootImageRecipe): string {
  return createHash('sha256')
    .update(readFileSync(fileURLToPath(import.meta.url)))
    .update(JSON.stringify({ rootfs, recipe, UBUNTU_USER_DATA, UBUNTU_NETWORK_CONFIG }))
    .digest('hex')
    .slice(0, 16);
}

/** Made in a directory of its own and renamed into place, so the cache holds only whole files. */
async function cached(path: string, make: (dir: string) => Promise<void>): Promise<{ path: string; made: boolean }> {
  if (existsSync(path)) return { path, made: false };
  const building = `${path}.building-${process.pid}`;
  rmSync(building, { recursive: true, force: true });
  mkdirSync(building, { recursive: true });
  await make(building);
  renameSync(building, path);
  return { path, made: true };
}

/** A made image: the raw file, its kernel and initrd (for QEMU to load as the Pi firmware loads them from the card). */
export interface BootImage {
  image: string;
  kernel: string;
  initrd: string;
  /** Seconds debootstrap took (0: its tree was cached), and seconds to make the image (0: cached). */
  debootstrapSeconds: number;
  makeSeconds: number;
}

/**
 * The image for `recipe` (raw, under /var/tmp), from the cache or made now from the cached root
 * filesystem; the images of other versions of the recipe are removed.
 */
export async function bootImage(recipe: BootImageRecipe): Promise<BootImage> {
  const { dir: rootfs, seconds } = debootstrapRoot();
  const started = Date.now();
  const dir = join(BOOT_IMAGE_CACHE, `${recipe.name}-${imageKey(rootfs, recipe)}`);
  const { made } = await cached(dir, async (building) => {
    await makeImage(building, rootfs, recipe);
  });
  for (const old of readdirSync(BOOT_IMAGE_CACHE))
    if (old.startsWith(`${recipe.name}-`) && join(BOOT_IMAGE_CACHE, old) !== dir)
      rmSync(join(BOOT_IMAGE_CACHE, old), { recursive: true, force: true });
  const files = readdirSync(join(rootfs, 'boot'));
  return {
    image: join(dir, recipe.name),
    kernel: join(rootfs, 'boot', files.find((f) => f.startsWith('vmlinuz-')) ?? 'vmlinuz'),
    initrd: join(rootfs, 'boot', files.find((f) => f.startsWith('initrd.img-')) ?? 'initrd.img'),
    debootstrapSeconds: seconds,
    makeSeconds: made ? (Date.now() - started) / 1000 : 0,
  };
}

/** The compressors, each at the level that makes it fast. */
const COMPRESSORS = {
  zst: ['zstd', '-q', '-1', '-T2', '-c'],
  gz: ['gzip', '-1', '-c'],
  xz: ['xz', '-0', '-T2', '-c'],
} as const;

/** `image` compressed with `format`, kept beside it in the cache. */
export async function compressedImage(image: string, format: keyof typeof COMPRESSORS): Promise<string> {
  const [command, ...args] = COMPRESSORS[format];
  const path = `${image}.${format}`;
  if (existsSync(path)) return path;
  const partial = `${path}.partial-${process.pid}`;
  await run('sh', ['-c', `"$0" "$@" > "${partial}"`, command, ...args, image]);
  renameSync(partial, path);
  return path;
}
