import { execFileSync } from 'node:child_process';
import { mkdirSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MiB } from '../../common/domain/units.js';
import { createLoop, scratchDir, writeRandomFile, type LoopDevice } from './loop-device.js';

const BLKIO = '/sys/fs/cgroup/blkio';

/**
 * A blkio (cgroup v1) group that limits writes to `device` to `bytesPerSecond`: a loop device on
 * /dev/shm becomes an honest slow SD card for every process placed in the group.
 */
export function throttledGroup(
  device: string,
  bytesPerSecond: number,
  direction: 'write' | 'read' = 'write',
): { dir: string; remove(): void } {
  const dir = `${BLKIO}/sluice-test-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  mkdirSync(dir);
  throttleDevice(dir, device, bytesPerSecond, direction);
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

/** Adds `device` to the throttled devices of the group at `dir`: one group can hold a rule for each of several cards. */
export function throttleDevice(
  dir: string,
  device: string,
  bytesPerSecond: number,
  direction: 'write' | 'read' = 'write',
): void {
  const majMin = execFileSync('lsblk', ['--nodeps', '--noheadings', '--output', 'MAJ:MIN', device], {
    encoding: 'utf8',
  }).trim();
  writeFileSync(`${dir}/blkio.throttle.${direction}_bps_device`, `${majMin} ${bytesPerSecond}`);
}

/** One group with a write limit for each of several cards (device paths the caller created). */
export function throttledCards(
  cards: readonly { device: string; bytesPerSecond: number }[],
): ReturnType<typeof throttledGroup> {
  const [first, ...rest] = cards;
  if (first === undefined) throw new Error('no cards to throttle');
  const group = throttledGroup(first.device, first.bytesPerSecond);
  for (const card of rest) throttleDevice(group.dir, card.device, card.bytesPerSecond);
  return group;
}

/** What a typical SD card sustains for writes, in bytes per second. */
export const SD_CARD_BYTES_PER_SECOND = 20 * 1000 * 1000;

export interface SlowCard {
  /** A 96 MiB image of random bytes: about 5 s of writing, time enough to interrupt it. */
  image: string;
  /** A 128 MiB loop device whose writes are throttled to SD-card speed for processes in `group`. */
  loop: LoopDevice;
  group: ReturnType<typeof throttledGroup>;
}

/** An image and a slow card to write it to; remove `group` when done. */
export function slowCard(): SlowCard {
  const dir = scratchDir();
  const image = join(dir, 'image.img');
  writeRandomFile(image, 96 * MiB);
  const loop = createLoop({ size: 128 * MiB, dir });
  return { image, loop, group: throttledGroup(loop.path, SD_CARD_BYTES_PER_SECOND) };
}

/** Reads per second from a slow source drive: 64 MiB take about 8 s, time enough to pull it or cancel. */
const SLOW_READ_BYTES_PER_SECOND = 8_000_000;

/** A 64 MiB drive of random bytes whose reads are throttled for processes in `group`; remove `group` when done. */
export function slowSourceDrive(): { loop: LoopDevice; group: ReturnType<typeof throttledGroup> } {
  const loop = createLoop({ size: 64 * MiB });
  return { loop, group: throttledGroup(loop.path, SLOW_READ_BYTES_PER_SECOND, 'read') };
}

/**
 * Limits every write to `device` to `bytesPerSecond`, in the root blkio group: unlike a child
 * group (throttledGroup), this also holds back the kernel's writeback of buffered writes (measured:
 * 60 MB through the page cache with conv=fsync took 3.4 s at 20 MB/s, as direct writes took 3.1 s),
 * which tools that write through the page cache (bmaptool) would otherwise escape. Only for a
 * device the caller created; `remove` lifts the limit.
 */
export function throttledDevice(device: string, bytesPerSecond: number): { remove(): void } {
  const majMin = execFileSync('lsblk', ['--nodeps', '--noheadings', '--output', 'MAJ:MIN', device], {
    encoding: 'utf8',
  }).trim();
  const rule = `${BLKIO}/blkio.throttle.write_bps_device`;
  writeFileSync(rule, `${majMin} ${bytesPerSecond}`);
  return { remove: () => writeFileSync(rule, `${majMin} 0`) };
}
