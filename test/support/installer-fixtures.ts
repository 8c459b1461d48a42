/**
 * Installer-mode fixtures that take seconds to build, kept between runs (fixture-cache.ts): a
 * non-hybrid ISO whose EFI loader is a GRUB standalone image that prints a marker on the serial
 * console and powers off.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cached } from './fixture-cache.js';
import { sh } from './os-image.js';

/** What the fixture's loader prints once the firmware has started it from the stick. */
export const BOOT_MARKER = 'SLUICE-INSTALLER-STICK-BOOTED';

const GRUB_CFG = `echo ${BOOT_MARKER}\nhalt\n`;

/**
 * A non-hybrid EFI ISO (no partition table; El Torito's EFI entry and /EFI/BOOT/BOOTX64.EFI), with
 * long names, nested folders, an empty file and a file of several MiB, as xorriso makes them.
 */
export function efiInstallerIso(): string {
  const dir = cached('efi-installer-v1', (work) => {
    writeFileSync(join(work, 'grub.cfg'), GRUB_CFG);
    sh(
      work,
      'grub-mkstandalone -O x86_64-efi --modules="echo halt" --locales= --themes= --fonts= -o loader.efi "boot/grub/grub.cfg=grub.cfg"',
    );
    const tree = join(work, 'tree');
    mkdirSync(join(tree, 'EFI/BOOT'), { recursive: true });
    mkdirSync(join(tree, 'casper/a folder with a long name/deeper still'), { recursive: true });
    sh(
      work,
      'cp loader.efi tree/EFI/BOOT/BOOTX64.EFI && head -c 5000000 /dev/urandom > "tree/casper/filesystem.squashfs" && : > tree/casper/empty',
    );
    writeFileSync(
      join(tree, 'casper/a folder with a long name/deeper still/Ünïcödé name, with spaces.txt'),
      'long names survive\n',
    );
    writeFileSync(join(tree, 'README.diskdefines'), '#define DISKNAME Sluice test\n');
    for (let i = 0; i < 40; i++)
      writeFileSync(join(tree, `casper/package-number-${i}.deb`), `package ${i}\n`.repeat(i * 100));
    sh(
      work,
      'mkfs.fat -C tree/efi.img 4096 >/dev/null && mmd -i tree/efi.img ::/EFI ::/EFI/BOOT && mcopy -i tree/efi.img loader.efi ::/EFI/BOOT/BOOTX64.EFI',
    );
    execFileSync('xorriso', [
      '-as',
      'mkisofs',
      '-quiet',
      '-R',
      '-J',
      '-joliet-long',
      '-V',
      'SLUICE_TEST',
      '-e',
      'efi.img',
      '-no-emul-boot',
      '-o',
      join(work, 'installer.iso'),
      tree,
    ]);
  });
  return join(dir, 'installer.iso');
}

/**
 * Bytes of the four random files the big WIM holds: 4.10 GiB in all, just past FAT32's 4 GiB - 1,
 * so the WIM must be split. Random, so that a range the flash failed to write (zeros, or stale
 * bytes) cannot pass for the WIM's; each a different size, because wimlib-imagex reads files of
 * one size twice (once to find duplicates by their SHA-1), which made the capture 52 s, not 19 s.
 */
const BIG_FILE_BYTES = [1_100_000_000, 1_101_000_000, 1_102_000_000, 1_103_000_000];

/** Image count, names and sizes, as `wimlib-imagex info` prints them (of a split WIM: from its first part). */
export function wimInfo(wim: string): string {
  const info = execFileSync('wimlib-imagex', ['info', wim], { encoding: 'utf8' });
  return [...info.matchAll(/^(Image Count|Total Bytes|Name):\s*(.+)$/gm)].map((m) => `${m[1]}: ${m[2]}`).join('\n');
}

/**
 * A UDF ISO laid out like a Windows installer (bootmgr, efi/boot/bootx64.efi, sources/install.wim,
 * boot/, setup.exe), whose install.wim (wimlib-imagex capture, no compression, two images) is
 * 4.10 GiB, and whose EFI loader prints the boot marker. Beside it: `tree`, the files it was made
 * from without the WIM, and `install.wim.info`, the WIM's wimInfo. 4.1 GiB on disk, built once
 * (about a minute: the data written once, read and written by the capture, read and written again
 * into the ISO).
 */
export function windowsBigIso(): string {
  const dir = cached('windows-big-v2', (work) => {
    writeFileSync(join(work, 'grub.cfg'), GRUB_CFG);
    sh(
      work,
      'grub-mkstandalone -O x86_64-efi --modules="echo halt" --locales= --themes= --fonts= -o loader.efi "boot/grub/grub.cfg=grub.cfg"',
    );
    for (const folder of ['tree/efi/boot', 'tree/sources', 'tree/boot/en-us', 'data', 'small'])
      mkdirSync(join(work, folder), { recursive: true });
    BIG_FILE_BYTES.forEach((bytes, i) =>
      sh(
        work,
        `openssl enc -aes-128-ctr -nosalt -pass pass:sluice-${i} < /dev/zero 2>/dev/null | head -c ${bytes} > data/part-${i}.bin`,
      ),
    );
    writeFileSync(join(work, 'small/readme.txt'), 'a second image\n');
    sh(
      work,
      'wimlib-imagex capture data tree/sources/install.wim "Windows Sluice Test" --compress=none >/dev/null && wimlib-imagex append small tree/sources/install.wim "Second image" --compress=none >/dev/null && rm -rf data',
    );
    writeFileSync(join(work, 'install.wim.info'), wimInfo(join(work, 'tree/sources/install.wim')));
    sh(
      work,
      'cp loader.efi tree/efi/boot/bootx64.efi && printf bootmgr > tree/bootmgr && printf MZ > tree/setup.exe && printf "boot resources\\n" > tree/boot/en-us/bootfix.bin && printf "[AutoRun]\\n" > tree/autorun.inf',
    );
    sh(
      work,
      'genisoimage -quiet -udf -iso-level 3 -allow-limited-size -V WIN_SLUICE -o installer.iso tree && rm tree/sources/install.wim',
    );
  });
  return join(dir, 'installer.iso');
}

/** Boots a disk image under OVMF (QEMU, TCG) as a USB stick; returns the serial console's text. */
export function bootUnderOvmf(disk: string, dir: string): { output: string; seconds: number } {
  copyFileSync('/usr/share/OVMF/OVMF_VARS_4M.fd', join(dir, 'vars.fd'));
  const started = performance.now();
  const run = spawnSync(
    'qemu-system-x86_64',
    [
      '-machine',
      'q35',
      '-accel',
      'tcg',
      '-m',
      '256',
      '-nographic',
      '-no-reboot',
      '-serial',
      'stdio',
      '-monitor',
      'none',
      '-net',
      'none',
      '-drive',
      'if=pflash,format=raw,readonly=on,file=/usr/share/OVMF/OVMF_CODE_4M.fd',
      '-drive',
      `if=pflash,format=raw,file=${join(dir, 'vars.fd')}`,
      '-drive',
      `if=none,id=stick,format=raw,file=${disk},snapshot=on`,
      '-device',
      'qemu-xhci',
      '-device',
      'usb-storage,drive=stick,bootindex=0',
    ],
    { encoding: 'utf8', timeout: 120_000 },
  );
  return { output: `${run.stdout}${run.stderr}`, seconds: (performance.now() - started) / 1000 };
}
