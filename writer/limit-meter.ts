import type { Limit } from '../common/domain/progress.js';

/** The window the shares are taken over: as long as the speed's (progress-meter.ts), so both tell of the same seconds. */
const WINDOW_MS = 3000;
/** Less than this much writing says nothing yet: the first turns wait for a decoder that is starting. */
const MIN_MS = 500;
/** Cumulative samples are kept at most this often, so that SAMPLES of them span the window at any speed. */
const SAMPLE_MS = 100;
const SAMPLES = 32;

/**
 * Which side sets the speed of a write, measured rather than guessed: the pump reports after each
 * turn how long the drive waited for the source (its write done, the next read not) or the source
 * for the drive (its bytes read, the write still going). Over the last few seconds, the side that
 * was waited for is the bottleneck. A decoder on a pipe shows as the source as soon as it is slower
 * than the card: its next buffer is then not ready when the write ends.
 */
export class LimitMeter {
  private sourceMs = 0;
  private driveMs = 0;
  private readonly times = new Float64Array(SAMPLES);
  private readonly sources = new Float64Array(SAMPLES);
  private readonly drives = new Float64Array(SAMPLES);
  private head = 0;
  private count = 0;

  constructor(private readonly now: () => number = () => performance.now()) {
    this.sample(this.now());
  }

  /** One turn's waits, in milliseconds (pump.ts `waited`). */
  waited(sourceMs: number, driveMs: number): void {
    this.sourceMs += sourceMs;
    this.driveMs += driveMs;
    const t = this.now();
    const last = this.times[(this.head - 1 + SAMPLES) % SAMPLES] ?? 0;
    if (t - last >= SAMPLE_MS) this.sample(t);
  }

  /** The side that limited the last few seconds, or undefined while too little is measured. */
  current(): Limit | undefined {
    const t = this.now();
    // The oldest sample inside the window, or the oldest kept.
    let oldest = (this.head - this.count + SAMPLES) % SAMPLES;
    for (let i = 0; i < this.count - 1 && t - (this.times[oldest] ?? 0) > WINDOW_MS; i++)
      oldest = (oldest + 1) % SAMPLES;
    const span = t - (this.times[oldest] ?? t);
    if (span < MIN_MS) return undefined;
    const sourceWait = share(this.sourceMs - (this.sources[oldest] ?? 0), span);
    const driveWait = share(this.driveMs - (this.drives[oldest] ?? 0), span);
    return { by: sourceWait > driveWait ? 'source' : 'drive', sourceWait, driveWait };
  }

  private sample(t: number): void {
    this.times[this.head] = t;
    this.sources[this.head] = this.sourceMs;
    this.drives[this.head] = this.driveMs;
    this.head = (this.head + 1) % SAMPLES;
    this.count = Math.min(this.count + 1, SAMPLES);
  }
}

/** `ms` of `span`, from 0 to 1, to three places (what --json shows). */
function share(ms: number, span: number): number {
  return Math.round(Math.min(1, Math.max(0, ms / span)) * 1000) / 1000;
}
