/**
 * Installer-mode fixtures that take seconds to build, kept in /var/tmp between runs (keyed by a
 * version: change it when the recipe changes) and built once per machine: a non-hybrid ISO whose
 * EFI loader is a GRUB standalone image that prints a marker on the serial console and powers off.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sh } from './os-image.js';

const CACHE = '/var/tmp/sluice-test-fixtures';
/** What the fixture's loader prints once the firmware has started it from the stick. */
export const BOOT_MARKER = 'SLUICE-INSTALLER-STICK-BOOTED';

const GRUB_CFG = `echo ${BOOT_MARKER}\nhalt\n`;

/** Builds `name` in a fresh folder with `build` unless the cache holds it; returns its folder. */
function cached(name: string, build: (dir: string) => void): string {
  const dir = join(CACHE, name);
  if (existsSync(join(dir, '.done'))) return dir;
  mkdirSync(CACHE, { recursive: true });
  const work = `${dir}.${process.pid}`;
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work);
  build(work);
  writeFileSync(join(work, '.done'), '');
  rmSync(dir, { recursive: true, force: true });
  renameSync(work, dir);
  return dir;
}

/**
 * A non-hybrid EFI ISO (no partition table; El Torito's EFI entry and /EFI/BOOT/BOOTX64.EFI), with
 * long names, nested folders, an empty file and a file of several MiB, as xorriso makes them.
 */
export function efiInstallerIso(): string {
  const dir = cached('efi-installer-v1', (work) => {
    writeFileSync(join(work, 'grub.cfg'), GRUB_CFG);
    sh(work, 'grub-mkstandalone -O x86_64-efi --modules="echo halt" --locales= --themes= --fonts= -o loader.efi "boot/grub/grub.cfg=grub.cfg"');
    const tree = join(work, 'tree');
    mkdirSync(join(tree, 'EFI/BOOT'), { recursive: true });
    mkdirSync(join(tree, 'casper/a folder with a long name/deeper still'), { recursive: true });
    sh(work, 'cp loader.efi tree/EFI/BOOT/BOOTX64.EFI && head -c 5000000 /dev/urandom > "tree/casper/filesystem.squashfs" && : > tree/casper/empty');
    writeFileSync(join(tree, 'casper/a folder with a long name/deeper still/Ünïcödé name, with spaces.txt'), 'long names survive\n');
    writeFileSync(join(tree, 'README.diskdefines'), '#define DISKNAME Sluice test\n');
    for (let i = 0; i < 40; i++) writeFileSync(join(tree, `casper/package-number-${i}.deb`), `package ${i}\n`.repeat(i * 100));
    sh(work, 'mkfs.fat -C tree/efi.img 4096 >/dev/null && mmd -i tree/efi.img ::/EFI ::/EFI/BOOT && mcopy -i tree/efi.img loader.efi ::/EFI/BOOT/BOOTX64.EFI');
    execFileSync('xorriso', ['-as', 'mkisofs', '-quiet', '-R', '-J', '-joliet-long', '-V', 'SLUICE_TEST', '-e', 'efi.img', '-no-emul-boot', '-o', join(work, 'installer.iso'), tree]);
  });
  return join(dir, 'installer.iso');
}
