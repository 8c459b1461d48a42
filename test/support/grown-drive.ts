/**
 * A drive as an OS leaves it after its first boot: the OS image written at its start, and its last
 * partition (ext4) grown to the drive's end. A backup then has nothing past the partitions to read,
 * and the root's free space is what it may leave out.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { attachLoop, type LoopDevice } from './loop-device.js';

/**
 * A loop device of `size` bytes (its backing file in `dir`) holding `image` (GPT, ext4 last), with
 * the last partition and its filesystem grown to the end, as growpart and resize2fs do.
 */
export function grownDrive(image: string, size: number, dir: string): LoopDevice {
  const backing = join(dir, 'grown-drive.img');
  execFileSync('cp', ['--sparse=always', image, backing]);
  execFileSync('truncate', ['-s', String(size), backing]);
  execFileSync('sfdisk', ['--quiet', '--relocate', 'gpt-bak-std', backing]);
  const last = JSON.parse(execFileSync('sfdisk', ['--json', backing], { encoding: 'utf8' })) as {
    partitiontable: { partitions: unknown[] };
  };
  const number = String(last.partitiontable.partitions.length);
  execFileSync('sfdisk', ['--quiet', '--no-reread', '-N', number, backing], { input: ', +\n' });
  const drive = attachLoop(backing, { partitions: true });
  execFileSync('resize2fs', [`${drive.path}p${number}`], { stdio: 'pipe' });
  return drive;
}
