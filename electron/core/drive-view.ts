import type { Drive } from '../../common/domain/drive.js';
import type { Failure } from '../../common/domain/failure.js';
import {
  findImageDrive,
  judgeDrive,
  refusalFailure,
  refusalOf,
  type ImageFacts,
  type Verdict,
} from '../../common/domain/verdict.js';
import type { DriveInfo } from '../../common/contracts/app-models.js';
import type { ProbedImage } from './image-probe.js';

/**
 * The picker's view of `drives`: each with the shared verdicts on writing `image` to it (none
 * chosen: no verdicts about its size or its file). The image's own drive is looked for among all
 * of `drives`, hidden ones included: it is usually this computer's system disk.
 */
export function judgeDrives(drives: readonly Drive[], image: ProbedImage | null): DriveInfo[] {
  const facts: ImageFacts | null =
    image === null ? null : { size: image.info.size, atLeast: !image.info.sizeExact, ...storage(image, drives) };
  return drives.map((drive) => ({ ...drive, verdicts: judgeDrive(drive, facts) }));
}

/** The drive the image is: a clone's source, or the drive whose filesystem holds the image file. */
function storage(image: ProbedImage, drives: readonly Drive[]): Pick<ImageFacts, 'storedOn' | 'isDrive'> {
  if (image.source.kind === 'drive') return { storedOn: image.source.device, isDrive: true };
  return { storedOn: image.local === null ? null : findImageDrive(image.local.realPath, drives) };
}

type InternalDiskVerdict = Extract<Verdict, { kind: 'system' }>;

/**
 * Why `drive` may not be written, as the failure the helper and the CLI would report: what the
 * shared rules refuse, or an internal disk whose name the user did not type. Null: it may be.
 */
export function targetRefusal(drive: DriveInfo, confirmedByName: boolean): Failure | null {
  const refusal =
    refusalOf(drive.verdicts) ??
    (confirmedByName ? undefined : drive.verdicts.find((v): v is InternalDiskVerdict => v.kind === 'system'));
  return refusal === undefined ? null : refusalFailure(refusal);
}
