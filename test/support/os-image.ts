import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MiB } from '../../common/domain/units.js';
import { writeRandomFile } from './loop-device.js';

/** Where the test image's boot partition starts, in bytes. */
export const BOOT_OFFSET = 1 * MiB;

/** How the OS-like image is laid out and made. */
export interface OsImageOptions {
  /** Its partition table: GPT (the default) or MBR, as Raspberry Pi OS has. */
  table?: 'gpt' | 'mbr';
  /** A 40 MiB FAT32 boot partition (mkfs.vfat -F 32), as OS images have, instead of an 8 MiB FAT12. */
  fat32?: boolean;
  /** mkfs.ext4 options for the root filesystem, in place of the default `-E lazy_itable_init=0,lazy_journal_init=0`. */
  ext4?: string[];
  /** A last partition of this many bytes of random data, of a type nothing reads (a vendor's firmware blob). */
  rawPartition?: number;
}

/** Where each partition of an OS-like image of `size` bytes lies, in bytes. */
export function osImageLayout(
  size: number,
  options: OsImageOptions = {},
): { boot: [number, number]; root: [number, number]; raw: [number, number] | null } {
  const bootSize = options.fat32 === true ? 40 * MiB : 8 * MiB;
  const rootOffset = BOOT_OFFSET + bootSize;
  // The last MiB stays outside every partition: a GPT's backup lives there.
  const rawSize = options.rawPartition ?? 0;
  const rootSize = size - rootOffset - rawSize - MiB;
  return {
    boot: [BOOT_OFFSET, bootSize],
    root: [rootOffset, rootSize],
    raw: rawSize > 0 ? [rootOffset + rootSize, rawSize] : null,
  };
}

/**
 * A small disk image laid out like an OS image: a partition table with a FAT boot partition
 * ("BOOT", holding files copied in with mtools, as this kernel has no vfat to mount) and an ext4
 * root partition ("rootfs", filled with mkfs.ext4 -d from a directory of text and random files),
 * with unused space that compresses to nothing and is left as holes in the file, as image
 * builders leave it (so bmaptool can map it). `size` must leave room for the partitions.
 */
export function osImage(dir: string, size: number, name = 'os.img', options: OsImageOptions = {}): string {
  const image = join(dir, name);
  const layout = osImageLayout(size, options);
  const sectors = ([offset, length]: [number, number]) => `start=${offset / 512}, size=${length / 512}`;
  execFileSync('truncate', ['-s', String(size), image]);
  const table =
    options.table === 'mbr'
      ? `label: dos\n${sectors(layout.boot)}, type=c\n${sectors(layout.root)}, type=83\n${layout.raw === null ? '' : `${sectors(layout.raw)}, type=da\n`}`
      : `label: gpt\n${sectors(layout.boot)}, type=C12A7328-F81F-11D2-BA4B-00A0C93EC93B, name=boot\n${sectors(layout.root)}, type=0FC63DAF-8483-4772-8E79-3D69D8477DE4, name=root\n${layout.raw === null ? '' : `${sectors(layout.raw)}, type=8DA63339-0007-60C0-C436-083AC8230908, name=firmware\n`}`;
  execFileSync('sfdisk', ['--quiet', image], { input: table });

  const boot = join(dir, `${name}.boot`);
  execFileSync('truncate', ['-s', String(layout.boot[1]), boot]);
  execFileSync('mkfs.vfat', [...(options.fat32 === true ? ['-F', '32', '-s', '1'] : []), '-n', 'BOOT', boot], {
    stdio: 'ignore',
  });
  const kernel = join(dir, `${name}.kernel`);
  writeRandomFile(kernel, 2 * MiB);
  writeFileSync(join(dir, `${name}.config`), 'dtparam=audio=on\n'.repeat(200));
  execFileSync('mcopy', ['-i', boot, kernel, '::/kernel.img']);
  execFileSync('mcopy', ['-i', boot, join(dir, `${name}.config`), '::/config.txt']);

  const tree = join(dir, `${name}.tree`);
  mkdirSync(join(tree, 'etc'), { recursive: true });
  mkdirSync(join(tree, 'usr', 'lib'), { recursive: true });
  writeFileSync(join(tree, 'etc', 'hostname'), 'sluice-test\n');
  writeFileSync(join(tree, 'etc', 'motd'), 'The programs included with this system are free software.\n'.repeat(500));
  writeRandomFile(join(tree, 'usr', 'lib', 'libblob.so'), 3 * MiB);
  const root = join(dir, `${name}.root`);
  execFileSync('truncate', ['-s', String(layout.root[1]), root]);
  execFileSync('mkfs.ext4', [
    '-q',
    '-F',
    '-L',
    'rootfs',
    ...(options.ext4 ?? ['-E', 'lazy_itable_init=0,lazy_journal_init=0']),
    '-d',
    tree,
    root,
  ]);

  // 4 KiB blocks: conv=sparse leaves a hole only where a whole block is zeros.
  const place = (part: string, offset: number) =>
    execFileSync('dd', [
      `if=${part}`,
      `of=${image}`,
      'bs=4K',
      `seek=${offset / 4096}`,
      'conv=notrunc,sparse',
      'status=none',
    ]);
  place(boot, layout.boot[0]);
  place(root, layout.root[0]);
  if (layout.raw !== null) {
    const raw = join(dir, `${name}.raw`);
    writeRandomFile(raw, layout.raw[1]);
    place(raw, layout.raw[0]);
  }
  return image;
}

/** Runs a shell pipeline (the reference tools that make fixtures: xz, zstd, zip…) in `dir`. */
export function sh(dir: string, script: string): void {
  execFileSync('sh', ['-c', script], { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
}

/** Free bytes of a FAT volume (a file, or a device with @@offset), as mtools counts them ("33 484 800 bytes free"). */
export function freeBytes(volume: string): number {
  const said = /([\d ]+) bytes free/.exec(execFileSync('mdir', ['-i', volume, '::/']).toString())?.[1];
  if (said === undefined) throw new Error(`mdir gave no free space for ${volume}`);
  return Number(said.replaceAll(' ', ''));
}

/** The first-boot layouts of issue 13's acceptance: what Sluice must tell apart and customise. */
export type BootLayout = 'pi-os' | 'ubuntu' | 'none' | 'pi-os-preseed';

/** Where a layout image's partitions are: Raspberry Pi OS's own MBR layout, scaled down. */
export const LAYOUT_BOOT_OFFSET = 4 * MiB;
export const LAYOUT_BOOT_SIZE = 48 * MiB;
export const LAYOUT_ROOT_OFFSET = LAYOUT_BOOT_OFFSET + LAYOUT_BOOT_SIZE;
export const LAYOUT_ROOT_SIZE = 24 * MiB;
export const LAYOUT_IMAGE_SIZE = LAYOUT_ROOT_OFFSET + LAYOUT_ROOT_SIZE;

/** Raspberry Pi OS's cmdline.txt, one line and its line break. */
export const PI_CMDLINE =
  'console=serial0,115200 console=tty1 root=PARTUUID=5e3da3da-02 rootfstype=ext4 fsck.repair=yes rootwait quiet init=/usr/lib/raspberrypi-sys-mods/firstboot\n';
const PI_CONFIG =
  '# For more options and information see\n# http://rptl.io/configtxt\n\n# Additional overlays and parameters are documented\n# /boot/firmware/overlays/README\ndtparam=audio=on\ncamera_auto_detect=1\narm_64bit=1\n';
/** Ubuntu for Raspberry Pi's seed files, as its images ship them. */
export const UBUNTU_USER_DATA =
  '#cloud-config\n\n# On first boot, set the (default) ubuntu user\'s password to "ubuntu" and\n# expire user passwords\nchpasswd:\n  expire: true\n  users:\n  - name: ubuntu\n    password: ubuntu\n    type: text\n\nssh_pwauth: true\n';
export const UBUNTU_NETWORK_CONFIG =
  'network:\n  version: 2\n  ethernets:\n    eth0:\n      dhcp4: true\n      optional: true\n';
const UBUNTU_META_DATA = 'instance-id: cloud-image\n';

/**
 * A Raspberry Pi OS cmdline.txt longer than a 512-byte cluster: its own arguments, then harmless
 * ones (each names its place, so a lost or moved byte shows), then its line break.
 */
export const LONG_PI_CMDLINE = `${PI_CMDLINE.trimEnd()} ${Array.from({ length: 60 }, (_, i) => `sluice.test${i}=${String(i).padStart(4, '0')}`).join(' ')}\n`;
/** A config.txt longer than a 512-byte cluster, naming /boot/firmware/ only past its first cluster. */
export const LONG_PI_CONFIG = `${'# padding so that the path lies past the first cluster\n'.repeat(16)}${PI_CONFIG}`;

/** The boot partition's files for a layout, in the order they are copied in (as rsync copies them: by name). */
function bootFiles(layout: BootLayout): [string, string | number][] {
  switch (layout) {
    case 'pi-os':
    case 'pi-os-preseed':
      return [
        ['bcm2711-rpi-4-b.dtb', 56 * 1024],
        ['bootcode.bin', 52 * 1024],
        ['cmdline.txt', PI_CMDLINE],
        ['config.txt', PI_CONFIG],
        ['issue.txt', 'Raspberry Pi reference 2024-11-19\n'],
        ['kernel8.img', 3 * MiB],
        ['start4.elf', 2 * MiB],
      ];
    case 'ubuntu':
      return [
        [
          'cmdline.txt',
          'console=serial0,115200 dwc_otg.lpm_enable=0 console=tty1 root=LABEL=writable rootfstype=ext4 rootwait fixrtc quiet splash\n',
        ],
        ['config.txt', '[all]\nkernel=vmlinuz\ncmdline=cmdline.txt\n'],
        ['meta-data', UBUNTU_META_DATA],
        ['network-config', UBUNTU_NETWORK_CONFIG],
        ['user-data', UBUNTU_USER_DATA],
        ['vmlinuz', 3 * MiB],
      ];
    case 'none':
      return [
        ['README.txt', 'A data partition with a kernel and a boot loader configuration, and no first-boot settings.\n'],
        ['grub.cfg', 'set default=0\nmenuentry "Linux" { linux /vmlinuz root=/dev/sda2 }\n'],
        ['vmlinuz', 3 * MiB],
      ];
  }
}

/** The root filesystem's tree for a layout. */
function rootTree(layout: BootLayout, tree: string): void {
  const file = (path: string, text: string) => {
    mkdirSync(join(tree, path, '..'), { recursive: true });
    writeFileSync(join(tree, path), text);
  };
  file('etc/hostname', 'raspberrypi\n');
  file('etc/motd', 'The programs included with this system are free software.\n'.repeat(200));
  if (layout === 'pi-os' || layout === 'pi-os-preseed') {
    file('usr/lib/raspberrypi-sys-mods/imager_custom', '#!/bin/sh\n');
    file('usr/lib/userconf-pi/userconf', '#!/bin/sh\n');
    mkdirSync(join(tree, 'boot', 'firmware'), { recursive: true });
  }
  if (layout === 'pi-os-preseed')
    file('usr/lib/systemd/system/rpi-preseed.service', '[Unit]\nConditionPathExists=/boot/firmware/rpi-preseed.toml\n');
  if (layout === 'ubuntu') {
    file('etc/cloud/cloud.cfg', 'datasource_list: [NoCloud]\n');
    mkdirSync(join(tree, 'boot', 'firmware'), { recursive: true });
  }
  mkdirSync(join(tree, 'usr', 'lib'), { recursive: true });
  writeRandomFile(join(tree, 'usr', 'lib', 'libblob.so'), 2 * MiB);
}

/**
 * An image laid out like Raspberry Pi OS, Ubuntu for Raspberry Pi, or neither (issue 13's
 * acceptance): an MBR, a FAT32 boot partition filled with mtools, an ext4 root filled by
 * mkfs.ext4 -d. `fillBoot` leaves only that many bytes free on the boot partition (a file of
 * random bytes takes the rest); `files` replaces the content of boot files by name.
 */
export function layoutImage(
  dir: string,
  layout: BootLayout,
  options: { name?: string; fillBoot?: number; files?: Record<string, string> } = {},
): string {
  const name = options.name ?? `${layout}.img`;
  const image = join(dir, name);
  execFileSync('truncate', ['-s', String(LAYOUT_IMAGE_SIZE), image]);
  execFileSync('sfdisk', ['--quiet', image], {
    input: `label: dos\nlabel-id: 0x5e3da3da\nstart=${LAYOUT_BOOT_OFFSET / 512}, size=${LAYOUT_BOOT_SIZE / 512}, type=c\nstart=${LAYOUT_ROOT_OFFSET / 512}, type=83\n`,
  });
  const boot = join(dir, `${name}.boot`);
  execFileSync('truncate', ['-s', String(LAYOUT_BOOT_SIZE), boot]);
  execFileSync('mkfs.vfat', ['-F', '32', '-s', '1', '-n', layout === 'ubuntu' ? 'system-boot' : 'bootfs', boot], {
    stdio: 'ignore',
  });
  for (const [file, content] of bootFiles(layout).map(([f, c]): [string, string | number] => [
    f,
    options.files?.[f] ?? c,
  ])) {
    const source = join(dir, `${name}.${file}`);
    if (typeof content === 'number') writeRandomFile(source, content);
    else writeFileSync(source, content);
    execFileSync('mcopy', ['-i', boot, source, `::/${file}`]);
  }
  if (options.fillBoot !== undefined) {
    const free = freeBytes(boot);
    const filler = join(dir, `${name}.filler`);
    writeRandomFile(filler, free - options.fillBoot);
    execFileSync('mcopy', ['-i', boot, filler, '::/filler.bin']);
  }
  const tree = join(dir, `${name}.tree`);
  rootTree(layout, tree);
  const root = join(dir, `${name}.root`);
  execFileSync('truncate', ['-s', String(LAYOUT_ROOT_SIZE), root]);
  execFileSync('mkfs.ext4', [
    '-q',
    '-F',
    '-L',
    'rootfs',
    '-E',
    'lazy_itable_init=0,lazy_journal_init=0',
    '-d',
    tree,
    root,
  ]);
  execFileSync('dd', [
    `if=${boot}`,
    `of=${image}`,
    'bs=4K',
    `seek=${LAYOUT_BOOT_OFFSET / 4096}`,
    'conv=notrunc,sparse',
    'status=none',
  ]);
  execFileSync('dd', [
    `if=${root}`,
    `of=${image}`,
    'bs=4K',
    `seek=${LAYOUT_ROOT_OFFSET / 4096}`,
    'conv=notrunc,sparse',
    'status=none',
  ]);
  return image;
}
