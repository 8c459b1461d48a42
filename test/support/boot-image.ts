/**
 * Small bootable images for the boot tests, made from one Debian system that debootstrap builds
 * once and that is kept under /var/tmp (on disk: it is about 1 GB), keyed by a hash of its recipe,
 * so a change of the recipe makes a new one. Each variant is a copy of it, edited: laid out like
 * Raspberry Pi OS (cloud-init off) or like Ubuntu for Raspberry Pi (cloud-init reading its NoCloud
 * seed from the FAT labelled system-boot). The image has an MBR, a FAT32 boot partition with
 * 512-byte clusters holding a cmdline.txt and a config.txt each over one cluster, and an ext4 root;
 * its kernel and initrd are kept beside it, for QEMU to load as the Pi firmware loads them from the
 * card.
 */
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
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
  'sound', 'drivers/gpu', 'drivers/media', 'drivers/net/wireless', 'drivers/net/ethernet', 'drivers/infiniband',
  'drivers/staging', 'drivers/bluetooth', 'drivers/iio', 'drivers/isdn', 'drivers/usb', 'drivers/hwmon',
];

/** Removes the unused files from `tree`, and lists the kernel modules that are left (depmod). */
function slim(tree: string): void {
  for (const path of UNUSED_PATHS) rmSync(join(tree, path), { recursive: true, force: true });
  const modules = join(tree, 'usr/lib/modules');
  for (const version of readdirSync(modules)) {
    for (const path of UNUSED_MODULES) rmSync(join(modules, version, 'kernel', path), { recursive: true, force: true });
    execFileSync('chroot', [tree, 'depmod', '-a', version]);
  }
}

/** A Debian root filesystem made by debootstrap, cached by its recipe; the time it took when it was made, else 0. */
export function debootstrapRoot(): { dir: string; seconds: number } {
  const key = createHash('sha256')
    .update(JSON.stringify({ SUITE, MIRROR, PACKAGES, UNUSED_PATHS, UNUSED_MODULES }))
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
    writeFileSync(join(dir, `${recipe.name}.${name}`), text);
    execFileSync('mcopy', ['-i', boot, join(dir, `${recipe.name}.${name}`), `::/${name}`]);
  }
  return boot;
}

/** Copies the partition file `part` into `image` at `offset`, and removes it. */
function placePartition(part: string, image: string, offset: number): void {
  execFileSync('dd', [
    `if=${part}`,
    `of=${image}`,
    'bs=4M',
    `seek=${offset / (4 * MiB)}`,
    'conv=notrunc,sparse',
    'status=none',
  ]);
  rmSync(part);
}

/**
 * The image for `recipe` (raw, under /var/tmp), with its kernel and initrd, made from the cached
 * root filesystem. The root filesystem is copied, so the cache stays as debootstrap left it.
 */
export function bootImage(
  dir: string,
  recipe: BootImageRecipe,
): { image: string; kernel: string; initrd: string; debootstrapSeconds: number } {
  const { dir: rootfs, seconds } = debootstrapRoot();
  const tree = join(dir, `${recipe.name}.tree`);
  execFileSync('cp', ['-a', rootfs, tree]);
  configure(tree, recipe);
  const files = readdirSync(join(tree, 'boot'));
  const kernel = join(dir, 'vmlinuz');
  const initrd = join(dir, 'initrd.img');
  copyFileSync(join(tree, 'boot', files.find((f) => f.startsWith('vmlinuz-')) ?? 'vmlinuz'), kernel);
  copyFileSync(join(tree, 'boot', files.find((f) => f.startsWith('initrd.img-')) ?? 'initrd.img'), initrd);
  const root = join(dir, `${recipe.name}.root`);
  execFileSync('truncate', ['-s', String(ROOT_SIZE), root]);
  execFileSync('mkfs.ext4', ['-q', '-F', '-L', 'rootfs', '-d', tree, root]);
  rmSync(tree, { recursive: true, force: true });

  const image = join(dir, recipe.name);
  execFileSync('truncate', ['-s', String(IMAGE_SIZE), image]);
  execFileSync('sfdisk', ['--quiet', image], {
    input: `label: dos\nlabel-id: 0x${DISK_ID}\nstart=${BOOT_OFFSET / 512}, size=${BOOT_SIZE / 512}, type=c\nstart=${ROOT_OFFSET / 512}, type=83\n`,
  });
  placePartition(bootPartition(dir, recipe), image, BOOT_OFFSET);
  placePartition(root, image, ROOT_OFFSET);
  return { image, kernel, initrd, debootstrapSeconds: seconds };
}
