/**
 * The benchmark's image: 1 GiB laid out and filled like an OS image, so decoders meet realistic
 * data (about 40% used: programs, headers, libraries, and some incompressible blobs as packages
 * and squashfs leave). Built once into a fixture directory and reused, since compressing 1 GiB
 * with xz or bzip2 takes minutes.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { GiB, MiB } from '../../common/domain/units.js';
import { writeRandomFile } from '../support/loop-device.js';

export const OS_IMAGE_BYTES = 1 * GiB;
const BOOT_SECTORS = 262144; // 128 MiB
const FIRST_SECTOR = 2048;

function sh(cwd: string, script: string): void {
  execFileSync('sh', ['-c', script], { cwd, stdio: ['ignore', 'ignore', 'inherit'] });
}

/** Builds `dir`/os.img once (GPT, FAT32 boot with libraries and a random "initrd", ext4 root). */
export function osLikeImage(dir: string): string {
  const image = join(dir, 'os.img');
  if (existsSync(image)) return image;
  mkdirSync(dir, { recursive: true });
  const stage = join(dir, 'stage');
  rmSync(stage, { recursive: true, force: true });
  mkdirSync(join(stage, 'usr'), { recursive: true });
  mkdirSync(join(stage, 'data'), { recursive: true });
  sh(dir, 'cp -a /usr/bin stage/usr/ 2>/dev/null || true; cp -a /usr/include stage/usr/ 2>/dev/null || true');
  writeRandomFile(join(stage, 'data', 'random.bin'), 40 * MiB);
  const partial = join(dir, 'os.img.partial');
  execFileSync('truncate', ['-s', String(OS_IMAGE_BYTES), partial]);
  execFileSync('sfdisk', ['--quiet', partial], {
    input: `label: gpt\nstart=${FIRST_SECTOR}, size=${BOOT_SECTORS}, type=C12A7328-F81F-11D2-BA4B-00A0C93EC93B, name=boot\nstart=${FIRST_SECTOR + BOOT_SECTORS}, type=0FC63DAF-8483-4772-8E79-3D69D8477DE4, name=root\n`,
  });
  const boot = join(dir, 'boot.part');
  execFileSync('truncate', ['-s', String(BOOT_SECTORS * 512), boot]);
  execFileSync('mkfs.vfat', ['-F', '32', '-n', 'BOOT', boot], { stdio: 'ignore' });
  writeRandomFile(join(dir, 'initrd.img'), 24 * MiB);
  execFileSync('mcopy', ['-i', boot, join(dir, 'initrd.img'), '::/initrd.img']);
  const libs = readdirSync('/usr/lib/x86_64-linux-gnu')
    .filter((name) => name.includes('.so'))
    .slice(0, 200);
  for (const lib of libs) {
    try {
      execFileSync('mcopy', ['-o', '-i', boot, join('/usr/lib/x86_64-linux-gnu', lib), `::/${lib}`], {
        stdio: 'ignore',
      });
    } catch {
      // a dangling link or a directory: skipped, as the shell version did
    }
  }
  const rootStart = (FIRST_SECTOR + BOOT_SECTORS) * 512;
  const root = join(dir, 'root.part');
  execFileSync('truncate', ['-s', String(OS_IMAGE_BYTES - rootStart - MiB), root]);
  execFileSync('mkfs.ext4', ['-q', '-F', '-L', 'root', '-d', stage, root]);
  sh(
    dir,
    `dd if=boot.part of=os.img.partial bs=1M seek=1 conv=notrunc status=none && dd if=root.part of=os.img.partial bs=512 seek=${rootStart / 512} conv=notrunc status=none`,
  );
  rmSync(stage, { recursive: true, force: true });
  rmSync(boot);
  rmSync(root);
  rmSync(join(dir, 'initrd.img'));
  execFileSync('mv', [partial, image]);
  return image;
}

/** Makes `dir`/`name` from os.img with the reference tool's `script` once; returns its path. */
export function compressedFixture(dir: string, name: string, script: string): string {
  const path = join(dir, name);
  if (existsSync(path)) return path;
  sh(dir, `${script} && mv ${name}.partial ${name}`);
  return path;
}
