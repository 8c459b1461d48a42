import type { ScanDrives, ScanOptions } from './drive-source.js';
import type { ScannedDrive } from './scanned-drive.js';

/**
 * How often the interim watcher looks again. drivelist spawns lsblk on Linux (about 20 ms of CPU
 * here), so once a second notices a card within a second at a cost of ~2% of one core.
 */
export const DRIVE_POLL_MS = 1000;

export interface DriveWatcher {
  /** Resolves once the first scan is in. */
  readonly ready: Promise<void>;
  current(): ScannedDrive[];
  /** Scans now (after a setting changed) instead of waiting for the next tick. */
  refresh(): Promise<void>;
  stop(): void;
}

/**
 * Polls `scan` and calls `onChange` with the full list whenever it differs from the last one. A
 * failed scan keeps the last list: a drive must not vanish from the picker because lsblk hiccuped.
 * The drives scanner (issue 4) emits added/removed/changed events itself and replaces this.
 */
export function watchDrives(scan: ScanDrives, options: () => ScanOptions, onChange: (drives: ScannedDrive[]) => void, intervalMs = DRIVE_POLL_MS): DriveWatcher {
  let drives: ScannedDrive[] = [];
  let fingerprint = '';
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | null = null;

  const scanOnce = async (): Promise<void> => {
    try {
      const next = await scan(options());
      const nextFingerprint = JSON.stringify(next);
      if (nextFingerprint !== fingerprint && !stopped) {
        drives = next;
        fingerprint = nextFingerprint;
        onChange(next);
      }
    } catch {
      // Keep the last list; the next tick tries again.
    }
  };
  const tick = (): Promise<void> => {
    running ??= scanOnce().finally(() => {
      running = null;
      if (!stopped) {
        clearTimeout(timer);
        timer = setTimeout(() => void tick(), intervalMs);
      }
    });
    return running;
  };

  const ready = tick();
  return {
    ready,
    current: () => drives,
    refresh: async () => {
      // A scan already under way may have used the old options; run one more after it.
      if (running !== null) await running;
      await tick();
    },
    stop: () => {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
