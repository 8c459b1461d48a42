import { ok, refuse, type ApiResult } from '../../common/contracts/api-result.js';
import type { DriveInfo } from '../../common/contracts/app-models.js';
import { DriveScanner, MAX_SCAN_INTERVAL_MS, type DriveScannerOptions } from '../../user/drives/scanner.js';
import { judgeDrives } from './drive-view.js';
import type { ProbedImage } from './image-probe.js';

/**
 * The drives the app sees, judged against the chosen image: the one place the drive list lives.
 *
 * Every drive is listed, system disks and virtual drives too; which of them the picker shows is
 * the page's business (isDriveShown, with its "show all drives" toggle and the showVirtual
 * setting), so both act at once and a chosen internal disk stays listed while the toggle is off.
 *
 * Polled once a second, the slowest the scanner allows: a card inserted shows within 2 s. A
 * listing (lsblk, and a second one for loop devices) costs a few hundredths of a second of CPU, so
 * this is about 3% of one core; polling every 2 s would halve that, but a card plugged in just after
 * a listing would then show only after 2 s plus the listing's own time.
 */
export class DriveListing {
  private readonly scanner: DriveScanner;
  private readonly first: Promise<void>;
  /** One listing's events arrive together; the page gets the new list once, after the last of them. */
  private publishQueued = false;

  constructor(
    /** The image the verdicts are about; null while none is chosen. */
    private readonly image: () => ProbedImage | null,
    /** Where the judged list goes whenever it may have changed. */
    private readonly publish: (drives: DriveInfo[]) => void,
    /** The scanner's listing (DriveScannerOptions.list). */
    list?: DriveScannerOptions['list'],
  ) {
    this.scanner = new DriveScanner({
      ...(list === undefined ? {} : { list }),
      showAll: true,
      showVirtual: true,
      intervalMs: MAX_SCAN_INTERVAL_MS,
      onEvent: () => {
        if (this.publishQueued) return;
        this.publishQueued = true;
        queueMicrotask(() => {
          this.publishQueued = false;
          this.republish();
        });
      },
      onError: (error) =>
        process.stderr.write(
          `sluice: could not list the drives (${error.message}); showing the last list until it works again.\n`,
        ),
    });
    this.first = this.scanner.start();
  }

  /** The drives with their verdicts now. */
  judged(): DriveInfo[] {
    return judgeDrives(this.scanner.drives, this.image());
  }

  /** The judged list after the first listing (right after start-up, it waits for it). */
  async current(): Promise<DriveInfo[]> {
    await this.first;
    return this.judged();
  }

  /** The verdicts depend on the chosen image too: a new image republishes the list. */
  republish(): void {
    this.publish(this.judged());
  }

  /** The drive at `device` in the app's own listing, or the refusal for one it does not see. */
  async find(device: string): Promise<ApiResult<DriveInfo>> {
    const drive = (await this.current()).find((d) => d.device === device);
    return drive === undefined ? notListed(device) : ok(drive);
  }

  stop(): Promise<void> {
    return this.scanner.stop();
  }
}

export function notListed(device: string): ApiResult<never> {
  return refuse('unknown-drive', `${device} is not among the drives Sluice sees now. Was it unplugged?`);
}
