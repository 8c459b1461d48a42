import type { Drive } from '../../common/domain/drive.js';
import type { DriveVisibility } from '../../common/domain/verdict.js';
import { listDrives } from './list-drives.js';

export type DriveEvent =
  | { type: 'added'; drive: Drive }
  | { type: 'removed'; drive: Drive }
  /** Something about the drive changed: mounted or unmounted, a new medium, its lock switch. */
  | { type: 'changed'; drive: Drive; previous: Drive };

export interface DriveScannerOptions extends DriveVisibility {
  /**
   * Milliseconds between listings, at most 1000, so that a card inserted while the app is open
   * shows within two seconds. Polling rather than udev or DiskArbitration events: it needs no
   * native code, works the same on every OS and inside containers without udev (like this
   * machine), and one listing costs a few milliseconds of CPU.
   */
  intervalMs?: number;
  /** Called for every difference between one listing and the next; the first listing adds every drive. */
  onEvent: (event: DriveEvent) => void;
  /** Called when listing fails, once per run of failures; the last known drives stand meanwhile. */
  onError?: (error: Error) => void;
  /** Lists the drives: listDrives (the system's own listing) unless a test lists what it cannot make here. */
  list?: typeof listDrives;
}

export const MAX_SCAN_INTERVAL_MS = 1000;

/** The events that turn the drives `before` (by device) into the drives `after`. */
export function diffDrives(before: ReadonlyMap<string, Drive>, after: readonly Drive[]): DriveEvent[] {
  const events: DriveEvent[] = [];
  const seen = new Set<string>();
  for (const drive of after) {
    seen.add(drive.device);
    const previous = before.get(drive.device);
    if (previous === undefined) events.push({ type: 'added', drive });
    else if (JSON.stringify(previous) !== JSON.stringify(drive)) events.push({ type: 'changed', drive, previous });
  }
  for (const [device, drive] of before) {
    if (!seen.has(device)) events.push({ type: 'removed', drive });
  }
  return events;
}

/**
 * Keeps a list of the drives and reports what changes. Listings never overlap: the next one is
 * scheduled when the last one has finished.
 */
export class DriveScanner {
  private known = new Map<string, Drive>();
  private visibility: DriveVisibility;
  private readonly intervalMs: number;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private firstListing: Promise<void> = Promise.resolve();
  private stopped = true;
  private failing = false;

  constructor(private readonly options: DriveScannerOptions) {
    this.visibility = { showAll: options.showAll, showVirtual: options.showVirtual };
    this.intervalMs = Math.min(options.intervalMs ?? MAX_SCAN_INTERVAL_MS, MAX_SCAN_INTERVAL_MS);
  }

  /** The drives as of the last listing, in listing order. */
  get drives(): Drive[] {
    return [...this.known.values()];
  }

  /**
   * Starts listing. Resolves once the first listing's events are out (or it failed), so a caller
   * can tell "no drives" from "not looked yet".
   */
  start(): Promise<void> {
    if (this.stopped) {
      this.stopped = false;
      this.tick();
      this.firstListing = this.running ?? Promise.resolve();
    }
    return this.firstListing;
  }

  /** Stops polling; resolves once a listing in progress has finished, so no event follows. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }

  /** Changes which drives are shown; the next listing reports the drives that appear or disappear. */
  setVisibility(visibility: DriveVisibility): void {
    this.visibility = { ...visibility };
  }

  private tick(): void {
    this.running = this.scan().finally(() => {
      this.running = null;
      if (!this.stopped) this.timer = setTimeout(() => this.tick(), this.intervalMs);
    });
  }

  private async scan(): Promise<void> {
    let drives: Drive[];
    try {
      drives = await (this.options.list ?? listDrives)(this.visibility);
    } catch (error) {
      if (!this.failing) this.options.onError?.(error instanceof Error ? error : new Error(String(error)));
      this.failing = true;
      return;
    }
    this.failing = false;
    if (this.stopped) return;
    const events = diffDrives(this.known, drives);
    this.known = new Map(drives.map((d) => [d.device, d]));
    for (const event of events) this.options.onEvent(event);
  }
}
