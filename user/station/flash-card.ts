import { staged } from '../../common/app/bottleneck.js';
import { toFailure } from '../../common/domain/failure.js';
import type { Phase, Progress } from '../../common/domain/progress.js';
import { DRIVE_INCOMPLETE, helperWithoutResult, type TargetResult } from '../../common/domain/result.js';
import { openSourceFeed } from '../images/feed/source-feed.js';
import type { LaunchedHelper } from '../launcher/launch.js';
import { cardHostname, imageForCard, type StationImage } from './station-image.js';

/** How one card's job ended, with what its log line needs beyond the helper's result. */
export interface CardOutcome {
  result: TargetResult;
  hostname: string | null;
  /** Bytes per second over the writing (with its final sync) and the verifying phases; null for a phase that did not run. */
  writeSpeed: number | null;
  verifySpeed: number | null;
  /** Image bytes a block map or a filesystem showed free, left unwritten. */
  bytesSkipped: number;
}

export interface CardHooks {
  /** The card's image is being prepared (its customisation planned); `hostname` is what it gets. */
  onPreparing(hostname: string | null): void;
  onProgress(progress: Progress): void;
}

export interface RunningCard {
  /** Never rejects: whatever stops the card is its failed result. */
  readonly outcome: Promise<CardOutcome>;
  cancel(): void;
}

/** Times each phase from its first report to the next phase's first report (or the end), with its last byte count. */
class PhaseClock {
  private readonly spans = new Map<Phase, { start: number; end: number; bytes: number }>();
  private current: Phase | null = null;

  see(progress: Progress, now = performance.now()): void {
    if (this.current !== null && this.current !== progress.phase) {
      const span = this.spans.get(this.current);
      if (span !== undefined) span.end = now;
    }
    const span = this.spans.get(progress.phase) ?? { start: now, end: now, bytes: 0 };
    span.bytes = progress.bytesDone;
    span.end = now;
    this.spans.set(progress.phase, span);
    this.current = progress.phase;
  }

  /** Bytes per second over `phases` together: the bytes of the first, the time of all. */
  speed(...phases: Phase[]): number | null {
    const spans = phases.map((p) => this.spans.get(p)).filter((s) => s !== undefined);
    const first = spans[0];
    if (first === undefined) return null;
    const seconds = (Math.max(...spans.map((s) => s.end)) - first.start) / 1000;
    return seconds > 0 ? Math.round(first.bytes / seconds) : null;
  }
}

/**
 * Writes the station's image to `device` as card number `n`, with its own helper: one card's
 * helper dying, its drive failing or being pulled out ends only that card's job. The helper writes,
 * checks the capacity, verifies, customises and ejects, as for `sluice flash` with one drive.
 * `medium` is the card the station saw arrive (Drive.medium): the helper writes no other.
 */
export function flashCard(
  image: StationImage,
  device: string,
  medium: string | null,
  n: number,
  hooks: CardHooks,
): RunningCard {
  let cancelled = false;
  let helper: LaunchedHelper | null = null;
  const clock = new PhaseClock();
  const run = async (): Promise<CardOutcome> => {
    let hostname: string | null = null;
    const cancelledResult = (): CardOutcome => ({
      result: { status: 'cancelled', target: device, bytes: 0 },
      hostname,
      writeSpeed: null,
      verifySpeed: null,
      bytesSkipped: 0,
    });
    try {
      hostname = cardHostname(image, n);
      hooks.onPreparing(hostname);
      const prepared = await imageForCard(image, n);
      if (cancelled) return cancelledResult();
      const feed = await openSourceFeed(prepared, {
        output: image.decoderOutput,
        leaveOut: image.exact ? 'nothing' : 'all',
      });
      if (cancelled) {
        await feed.close();
        return cancelledResult();
      }
      const launched = image.launch({
        source: feed.source,
        job: { kind: 'flash', targets: [device], media: [medium], ...feed.start, verify: true, eject: true },
        overlays: prepared.customisation?.overlays,
        onProgress: (p) => {
          clock.see(p);
          // As `sluice flash` shows it: writing that waits for its source is named by the source's stage.
          hooks.onProgress(staged(p, feed.stage()));
        },
      });
      helper = launched;
      const [result] = await feed.finish(launched.result, launched);
      return {
        result: result ?? helperWithoutResult(device, 'writing', DRIVE_INCOMPLETE),
        hostname,
        writeSpeed: clock.speed('writing', 'syncing'),
        verifySpeed: clock.speed('verifying'),
        // What the block map and the free space left out, as the helper counted it.
        bytesSkipped: result?.status === 'ok' ? (result.skipped ?? 0) : 0,
      };
    } catch (error) {
      return {
        result: { status: 'failed', target: device, bytes: 0, ...toFailure(error) },
        hostname,
        writeSpeed: null,
        verifySpeed: null,
        bytesSkipped: 0,
      };
    }
  };
  return {
    outcome: run(),
    cancel: () => {
      cancelled = true;
      helper?.cancel();
    },
  };
}
