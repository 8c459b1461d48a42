import type { Failure } from '../common/result.js';
import { formatBytes } from '../common/units.js';
import type { DeviceFacts } from './platform/types.js';

/**
 * Whether the engine may write an image of `imageSize` bytes (null: not known yet) to the device
 * described by `facts`. Returns the reason for refusing, or null. The facts must come from the
 * engine's own fresh look at the system, never from a caller's description of the drive.
 */
export function refuseTarget(facts: DeviceFacts, imageSize: number | null): Failure | null {
  const { path } = facts;
  if (!facts.exists) {
    return { code: 'target-not-found', message: `${path} does not exist: was the drive unplugged?` };
  }
  if (!facts.isBlockDevice) {
    return { code: 'target-not-block-device', message: `${path} is not a disk. Sluice writes whole disks only; to make an image file, copy the file instead.` };
  }
  if (facts.isPartition) {
    return { code: 'target-is-partition', message: `${path} is a partition, not a whole disk. Choose the disk it belongs to (for example /dev/sdb, not /dev/sdb1).` };
  }
  if (facts.isSystem) {
    return { code: 'target-system', message: `${path} holds the running system (${facts.mountpoints.join(', ')}). Sluice will not overwrite it.` };
  }
  if (facts.readOnly) {
    return { code: 'target-read-only', message: `${path} is read-only. If it is an SD card, slide its lock switch up and reinsert it.` };
  }
  if (facts.mountpoints.length > 0) {
    return { code: 'target-mounted', message: `${path} is in use: mounted at ${facts.mountpoints.join(', ')}. Unmount it first.` };
  }
  if (imageSize !== null && imageSize > facts.size) {
    return {
      code: 'target-too-small',
      message: `${path} is too small: the image needs ${formatBytes(imageSize)} (${imageSize} bytes), the drive has ${formatBytes(facts.size)} (${facts.size} bytes).`,
    };
  }
  return null;
}
