/**
 * Drives: what the machine has, and what changes. Used by the Electron main process and the CLI.
 * The types (Drive, Verdict) and the verdict rules live in common/domain, where the sandboxed
 * renderer can import them too.
 *
 *   const scanner = new DriveScanner({ showAll: false, showVirtual: false, onEvent });
 *   scanner.start();
 *   const verdicts = judgeDrive(drive, await imageFacts(imagePath, { size: imageSize }, scanner.drives));
 */
export type { Drive, DriveBus, SystemRole } from '../../common/domain/drive.js';
export {
  findImageDrive,
  isDriveShown,
  judgeDrive,
  refusalFailure,
  refusalOf,
  verdictEffect,
  type DriveVisibility,
  type ImageFacts,
  type Verdict,
  type VerdictEffect,
  type VerdictKind,
} from '../../common/domain/verdict.js';
export { imageFacts } from './image-facts.js';
export { listDrives } from './list-drives.js';
export { DriveScanner, type DriveEvent, type DriveScannerOptions } from './scanner.js';
