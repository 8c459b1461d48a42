import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MiB } from '../../common/domain/units.js';
import { writeRandomFile } from './loop-device.js';

/** Where the test image's partitions are, in bytes. */
export const BOOT_OFFSET = 1 * MiB;
export const BOOT_SIZE = 8 * MiB;
export const ROOT_OFFSET = BOOT_OFFSET + BOOT_SIZE;

/**
 * A small disk image laid out like an OS image: a GPT with a FAT boot partition ("BOOT",
 * holding files copied in with mtools, as this kernel has no vfat to mount) and an ext4 root
 * partition ("rootfs", filled with mkfs.ext4 -d from a directory of text and random files), with
 * unused space that compresses to nothing and is left as holes in the file, as image builders
 * leave it (so bmaptool can map it). `size` must leave room for both partitions.
 */
export function osImage(dir: string, size: number, name = 'os.img'): string {
  const image = join(dir, name);
  execFileSync('truncate', ['-s', String(size), image]);
  execFileSync('sfdisk', ['--quiet', image], {
    input: `label: gpt\nstart=${BOOT_OFFSET / 512}, size=${BOOT_SIZE / 512}, type=C12A7328-F81F-11D2-BA4B-00A0C93EC93B, name=boot\nstart=${ROOT_OFFSET / 512}, type=0FC63DAF-8483-4772-8E79-3D69D8477DE4, name=root\n`,
  });

  const boot = join(dir, `${name}.boot`);
  execFileSync('truncate', ['-s', String(BOOT_SIZE), boot]);
  execFileSync('mkfs.vfat', ['-n', 'BOOT', boot], { stdio: 'ignore' });
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
  execFileSync('truncate', ['-s', String(size - ROOT_OFFSET - MiB), root]);
  execFileSync('mkfs.ext4', ['-q', '-F', '-L', 'rootfs', '-E', 'lazy_itable_init=0,lazy_journal_init=0', '-d', tree, root]);

  // 4 KiB blocks: conv=sparse leaves a hole only where a whole block is zeros.
  execFileSync('dd', [`if=${boot}`, `of=${image}`, 'bs=4K', `seek=${BOOT_OFFSET / 4096}`, 'conv=notrunc,sparse', 'status=none']);
  execFileSync('dd', [`if=${root}`, `of=${image}`, 'bs=4K', `seek=${ROOT_OFFSET / 4096}`, 'conv=notrunc,sparse', 'status=none']);
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
export const PI_CMDLINE = 'console=serial0,115200 console=tty1 root=PARTUUID=5e3da3da-02 rootfstype=ext4 fsck.repair=yes rootwait quiet init=/usr/lib/raspberrypi-sys-mods/firstboot\n';
const PI_CONFIG = '# For more options and information see\n# http://rptl.io/configtxt\n\n# Additional overlays and parameters are documented\n# /boot/firmware/overlays/README\ndtparam=audio=on\ncamera_auto_detect=1\narm_64bit=1\n';
/** Ubuntu for Raspberry Pi's seed files, as its images ship them. */
export const UBUNTU_USER_DATA = '#cloud-config\n\n# On first boot, set the (default) ubuntu user\'s password to "ubuntu" and\n# expire user passwords\nchpasswd:\n  expire: true\n  users:\n  - name: ubuntu\n    password: ubuntu\n    type: text\n\nssh_pwauth: true\n';
export const UBUNTU_NETWORK_CONFIG = 'network:\n  version: 2\n  ethernets:\n    eth0:\n      dhcp4: true\n      optional: true\n';
const UBUNTU_META_DATA = 'instance-id: cloud-image\n';

/** The boot partition's files for a layout, in the order they are copied in (as rsync copies them: by name). */
function bootFiles(layout: BootLayout): [string, string | number][] {
  switch (layout) {
    case 'pi-os':
    case 'pi-os-preseed':
      return [['bcm2711-rpi-4-b.dtb', 56 * 1024], ['bootcode.bin', 52 * 1024], ['cmdline.txt', PI_CMDLINE], ['config.txt', PI_CONFIG], ['issue.txt', 'Raspberry Pi reference 2024-11-19\n'], ['kernel8.img', 3 * MiB], ['start4.elf', 2 * MiB]];
    case 'ubuntu':
      return [['cmdline.txt', 'console=serial0,115200 dwc_otg.lpm_enable=0 console=tty1 root=LABEL=writable rootfstype=ext4 rootwait fixrtc quiet splash\n'], ['config.txt', '[all]\nkernel=vmlinuz\ncmdline=cmdline.txt\n'], ['meta-data', UBUNTU_META_DATA], ['network-config', UBUNTU_NETWORK_CONFIG], ['user-data', UBUNTU_USER_DATA], ['vmlinuz', 3 * MiB]];
    case 'none':
      return [['README.txt', 'A data partition with a kernel and a boot loader configuration, and no first-boot settings.\n'], ['grub.cfg', 'set default=0\nmenuentry "Linux" { linux /vmlinuz root=/dev/sda2 }\n'], ['vmlinuz', 3 * MiB]];
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
  if (layout === 'pi-os-preseed') file('usr/lib/systemd/system/rpi-preseed.service', '[Unit]\nConditionPathExists=/boot/firmware/rpi-preseed.toml\n');
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
 * random bytes takes the rest).
 */
export function layoutImage(dir: string, layout: BootLayout, options: { name?: string; fillBoot?: number } = {}): string {
  const name = options.name ?? `${layout}.img`;
  const image = join(dir, name);
  execFileSync('truncate', ['-s', String(LAYOUT_IMAGE_SIZE), image]);
  execFileSync('sfdisk', ['--quiet', image], {
    input: `label: dos\nlabel-id: 0x5e3da3da\nstart=${LAYOUT_BOOT_OFFSET / 512}, size=${LAYOUT_BOOT_SIZE / 512}, type=c\nstart=${LAYOUT_ROOT_OFFSET / 512}, type=83\n`,
  });
  const boot = join(dir, `${name}.boot`);
  execFileSync('truncate', ['-s', String(LAYOUT_BOOT_SIZE), boot]);
  execFileSync('mkfs.vfat', ['-F', '32', '-s', '1', '-n', layout === 'ubuntu' ? 'system-boot' : 'bootfs', boot], { stdio: 'ignore' });
  for (const [file, content] of bootFiles(layout)) {
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
  execFileSync('mkfs.ext4', ['-q', '-F', '-L', 'rootfs', '-E', 'lazy_itable_init=0,lazy_journal_init=0', '-d', tree, root]);
  execFileSync('dd', [`if=${boot}`, `of=${image}`, 'bs=4K', `seek=${LAYOUT_BOOT_OFFSET / 4096}`, 'conv=notrunc,sparse', 'status=none']);
  execFileSync('dd', [`if=${root}`, `of=${image}`, 'bs=4K', `seek=${LAYOUT_ROOT_OFFSET / 4096}`, 'conv=notrunc,sparse', 'status=none']);
  return image;
}
