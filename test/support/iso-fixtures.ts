/**
 * Small optical-disc images of each kind Sluice tells apart (user/iso/classify.ts), made with the
 * tools that make real ones: xorriso for ISO 9660 (with Rock Ridge and Joliet, El Torito and an
 * appended EFI partition for a hybrid), genisoimage -udf for a UDF tree laid out like a Windows
 * installer. Each is a few hundred KiB and built in well under a second.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sh } from './os-image.js';

export type DiscFixture = 'hybrid' | 'non-hybrid' | 'windows' | 'not-bootable';

/** A FAT image holding /EFI/BOOT/BOOTX64.EFI: what El Torito's EFI entry and a hybrid's EFI partition boot. */
function efiImage(dir: string, loader: string): string {
  sh(
    dir,
    `rm -f efi.img && mkfs.fat -C efi.img 1440 >/dev/null && mmd -i efi.img ::/EFI ::/EFI/BOOT && mcopy -i efi.img ${loader} ::/EFI/BOOT/BOOTX64.EFI`,
  );
  return 'efi.img';
}

function tree(dir: string, files: Record<string, string | Buffer>): string {
  const root = join(dir, 'tree');
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), content);
  }
  return root;
}

/** Builds one kind of disc image in `dir` (a fresh folder); returns its path. */
export function discFixture(dir: string, kind: DiscFixture): string {
  const loader = Buffer.alloc(64 * 1024, 'MZ loader ');
  const iso = join(dir, `${kind}.iso`);
  switch (kind) {
    case 'not-bootable':
      tree(dir, { 'README.TXT': 'no boot here\n', 'docs/a long file name.txt': 'long names survive\n' });
      sh(dir, `xorriso -as mkisofs -quiet -R -J -o ${iso} tree`);
      break;
    case 'non-hybrid':
      tree(dir, { 'EFI/BOOT/BOOTX64.EFI': loader, 'boot/grub/grub.cfg': 'menuentry x {}\n' });
      writeFileSync(join(dir, 'loader.efi'), loader);
      sh(
        dir,
        `${efiImage(dir, 'loader.efi')} >/dev/null; cp efi.img tree/efi.img && xorriso -as mkisofs -quiet -R -J -e efi.img -no-emul-boot -o ${iso} tree`,
      );
      break;
    case 'hybrid':
      tree(dir, { 'EFI/BOOT/BOOTX64.EFI': loader });
      writeFileSync(join(dir, 'loader.efi'), loader);
      efiImage(dir, 'loader.efi');
      sh(dir, `xorriso -as mkisofs -quiet -R -J -append_partition 2 0xef efi.img -o ${iso} tree`);
      break;
    case 'windows':
      tree(dir, {
        bootmgr: 'bootmgr\n',
        'efi/boot/bootx64.efi': loader,
        'sources/install.wim': 'MSWIM\0\0\0 (not a real one)',
        'setup.exe': 'MZ\n',
      });
      sh(dir, `genisoimage -quiet -udf -iso-level 3 -o ${iso} tree`);
      break;
  }
  return iso;
}
