/**
 * Small bootable images laid out like Raspberry Pi OS, for the boot tests: a Debian system made
 * once with debootstrap and kept under /var/tmp (on disk: it is about 800 MB), keyed by a hash of
 * its recipe, so a change of the recipe makes a new one. The image has an MBR, a FAT32 boot
 * partition with 512-byte clusters holding cmdline.txt and config.txt, and an ext4 root; its
 * kernel and initrd are kept beside it, for QEMU to load as the Pi firmware loads them from the
 * card.
 */
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MiB } from '../../common/domain/units.js';

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
];

/** The disk identifier of the image's MBR: root=PARTUUID=5e3da3da-02, as Raspberry Pi OS names it. */
export const DISK_ID = '5e3da3da';
export const BOOT_OFFSET = 4 * MiB;
const BOOT_SIZE = 64 * MiB;
const ROOT_SIZE = 1536 * MiB;
export const IMAGE_SIZE = BOOT_OFFSET + BOOT_SIZE + ROOT_SIZE;

/** How the image differs from Raspberry Pi OS. */
export interface BootImageRecipe {
  /** Where the running system mounts the boot partition. */
  bootDir: '/boot' | '/boot/firmware';
  /** config.txt without any mention of /boot/firmware (as derivatives trim it). */
  trimmedConfig: boolean;
  /** A first user with uid 1000 ("pi"), as Raspberry Pi OS has; false: no user at all. */
  firstUser: boolean;
}

/** The card's command line: the serial console QEMU shows, and the root by PARTUUID. */
export const BOOT_CMDLINE = `console=ttyS0,115200 root=PARTUUID=${DISK_ID}-02 rootfstype=ext4 fsck.repair=yes rootwait net.ifnames=0\n`;

/** A Debian root filesystem made by debootstrap, cached by its recipe; the time it took when it was made, else 0. */
export function debootstrapRoot(): { dir: string; seconds: number } {
  const key = createHash('sha256').update(JSON.stringify({ SUITE, MIRROR, PACKAGES })).digest('hex').slice(0, 16);
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
  renameSync(building, dir);
  return { dir, seconds: (Date.now() - started) / 1000 };
}

/** Writes `text` to `path` under `root`, making its directory. */
function put(root: string, path: string, text: string): void {
  mkdirSync(join(root, path, '..'), { recursive: true });
  writeFileSync(join(root, path), text);
}

/** The system's own files for `recipe`: fstab, the network, a host name; the first user where asked. */
function configure(tree: string, recipe: BootImageRecipe): void {
  put(
    tree,
    'etc/fstab',
    `PARTUUID=${DISK_ID}-02 / ext4 defaults,noatime 0 1\nPARTUUID=${DISK_ID}-01 ${recipe.bootDir} vfat defaults 0 2\n`,
  );
  mkdirSync(join(tree, recipe.bootDir.slice(1)), { recursive: true });
  put(tree, 'etc/network/interfaces.d/eth0', 'auto eth0\niface eth0 inet dhcp\n');
  put(tree, 'etc/hostname', 'raspberrypi\n');
  put(tree, 'etc/hosts', '127.0.0.1\tlocalhost\n127.0.1.1\traspberrypi\n');
  if (recipe.firstUser)
    execFileSync('chroot', [tree, 'useradd', '-m', '-u', '1000', '-s', '/bin/bash', '-G', 'sudo', 'pi']);
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
  const tree = join(dir, 'tree');
  execFileSync('cp', ['-a', rootfs, tree]);
  configure(tree, recipe);
  const files = readdirSync(join(tree, 'boot'));
  const kernel = join(dir, 'vmlinuz');
  const initrd = join(dir, 'initrd.img');
  copyFileSync(join(tree, 'boot', files.find((f) => f.startsWith('vmlinuz-')) ?? 'vmlinuz'), kernel);
  copyFileSync(join(tree, 'boot', files.find((f) => f.startsWith('initrd.img-')) ?? 'initrd.img'), initrd);

  const image = join(dir, 'pi-like.img');
  execFileSync('truncate', ['-s', String(IMAGE_SIZE), image]);
  execFileSync('sfdisk', ['--quiet', image], {
    input: `label: dos\nlabel-id: 0x${DISK_ID}\nstart=${BOOT_OFFSET / 512}, size=${BOOT_SIZE / 512}, type=c\nstart=${(BOOT_OFFSET + BOOT_SIZE) / 512}, type=83\n`,
  });
  const boot = join(dir, 'boot.part');
  execFileSync('truncate', ['-s', String(BOOT_SIZE), boot]);
  execFileSync('mkfs.vfat', ['-F', '32', '-s', '1', '-n', 'bootfs', boot], { stdio: 'ignore' });
  const config = recipe.trimmedConfig
    ? 'arm_64bit=1\ndtparam=audio=on\n'
    : '# Additional overlays and parameters are documented\n# /boot/firmware/overlays/README\narm_64bit=1\n';
  for (const [name, text] of [
    ['cmdline.txt', BOOT_CMDLINE],
    ['config.txt', config],
  ]) {
    writeFileSync(join(dir, name ?? ''), text ?? '');
    execFileSync('mcopy', ['-i', boot, join(dir, name ?? ''), `::/${name ?? ''}`]);
  }
  const root = join(dir, 'root.part');
  execFileSync('truncate', ['-s', String(ROOT_SIZE), root]);
  execFileSync('mkfs.ext4', ['-q', '-F', '-L', 'rootfs', '-d', tree, root]);
  rmSync(tree, { recursive: true, force: true });
  execFileSync('dd', [
    `if=${boot}`,
    `of=${image}`,
    'bs=4M',
    `seek=${BOOT_OFFSET / (4 * MiB)}`,
    'conv=notrunc,sparse',
    'status=none',
  ]);
  execFileSync('dd', [
    `if=${root}`,
    `of=${image}`,
    'bs=4M',
    `seek=${(BOOT_OFFSET + BOOT_SIZE) / (4 * MiB)}`,
    'conv=notrunc,sparse',
    'status=none',
  ]);
  rmSync(boot);
  rmSync(root);
  return { image, kernel, initrd, debootstrapSeconds: seconds };
}
