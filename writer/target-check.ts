import type { Failure } from '../common/domain/failure.js';
import { judgeDrive, refusalFailure, refusalOf, type SafetyFacts } from '../common/domain/verdict.js';
import type { DeviceFacts } from './platform/types.js';

/**
 * The engine's own facts in the shape the shared safety rules read (common/domain/verdict.ts), so
 * the helper refuses exactly what the app and the CLI refuse, in the same words. Whether a drive
 * is virtual only decides what lists show; a device named explicitly may be written.
 */
export function safetyFacts(facts: DeviceFacts): SafetyFacts {
  return {
    device: facts.path,
    size: facts.size,
    readOnly: facts.readOnly,
    system: facts.isSystem ? 'running' : null,
    virtual: false,
    mountpoints: facts.mountpoints,
  };
}

/**
 * Whether the engine may write an image of `imageSize` bytes (null: not known yet) to the device
 * described by `facts`. `sourceDevice` is the st_dev of the image file the engine reads (null when
 * it reads a pipe): an image stored on the target itself is refused. Returns the reason for
 * refusing, or null. A mounted device is not refused: it is unmounted before it is opened. The
 * facts must come from the engine's own fresh look at the system, never from a caller.
 */
export function refuseTarget(
  facts: DeviceFacts,
  imageSize: number | null,
  sourceDevice: number | null,
): Failure | null {
  const { path } = facts;
  if (!facts.exists) {
    return { code: 'target-not-found', message: `${path} does not exist: was the drive unplugged?` };
  }
  if (!facts.isBlockDevice) {
    return {
      code: 'target-not-block-device',
      message: `${path} is not a disk. The writer writes whole disks only (the command line writes an image file on its own, without administrator rights).`,
    };
  }
  if (facts.isPartition) {
    return {
      code: 'target-is-partition',
      message: `${path} is a partition, not a whole disk. Choose the disk it belongs to (for example /dev/sdb, not /dev/sdb1).`,
    };
  }
  const storedOn = sourceDevice !== null && facts.devices.includes(sourceDevice) ? path : null;
  const refusal = refusalOf(judgeDrive(safetyFacts(facts), { size: imageSize, storedOn }));
  return refusal === undefined ? null : refusalFailure(refusal);
}
