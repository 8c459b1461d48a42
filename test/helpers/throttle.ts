import { execFileSync } from 'node:child_process';
import { mkdirSync, rmdirSync, writeFileSync } from 'node:fs';

const BLKIO = '/sys/fs/cgroup/blkio';

/**
 * A blkio (cgroup v1) group that limits writes to `device` to `bytesPerSecond`: a loop device on
 * /dev/shm becomes an honest slow SD card for every process placed in the group.
 */
export function throttledGroup(device: string, bytesPerSecond: number, direction: 'write' | 'read' = 'write'): { dir: string; remove(): void } {
  const majMin = execFileSync('lsblk', ['--nodeps', '--noheadings', '--output', 'MAJ:MIN', device], { encoding: 'utf8' }).trim();
  const dir = `${BLKIO}/sluice-test-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  mkdirSync(dir);
  writeFileSync(`${dir}/blkio.throttle.${direction}_bps_device`, `${majMin} ${bytesPerSecond}`);
  return {
    dir,
    remove: () => {
      try {
        rmdirSync(dir);
      } catch {
        // still has a process in it that is exiting; the kernel removes nothing, the name is unique
      }
    },
  };
}
