import type { Phase, Progress } from '../common/domain/progress.js';

/**
 * Reports are throttled to 4 a second: enough for a bar and a speed, and each one wakes every
 * process it passes through. On a 20 MB/s card the CLI spent 3.0-3.4 ms of CPU a second at 10 reports
 * a second and 1.2-1.3 ms at 4 (perf stat over 8 s of writing); the helper's cost, about 10 ms a
 * second, is its data path and did not change.
 */
export const PROGRESS_INTERVAL_MS = 250;
/** Speed is averaged over this window, so a single slow request does not make the ETA jump. */
const SPEED_WINDOW_MS = 3000;
const SAMPLES = 32;

/**
 * Turns a running byte count into throttled Progress reports with speed and ETA. The clock is
 * injectable so the throttle and the arithmetic are testable without sleeping.
 */
export class ProgressMeter {
  private readonly times = new Float64Array(SAMPLES);
  private readonly bytes = new Float64Array(SAMPLES);
  private head = 0;
  private count = 0;
  private lastEmit = -Infinity;
  private done = 0;

  constructor(
    private readonly phase: Phase,
    private readonly target: string,
    /** Bytes this phase will cover; a flash's shrinks as the stream leaves free space out. */
    public total: number | null,
    private readonly emit: (progress: Progress) => void,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.sample(this.now(), 0);
  }

  /** Records that `bytesDone` bytes of this phase are done; emits if the throttle allows. */
  update(bytesDone: number): void {
    this.done = bytesDone;
    const t = this.now();
    if (t - this.lastEmit < PROGRESS_INTERVAL_MS) return;
    this.sample(t, bytesDone);
    this.lastEmit = t;
    this.emit(this.report(t));
  }

  /**
   * Counts `bytesDone` as done before the meter started (elsewhere, at another pace): in what is
   * done, not in the speed.
   */
  startAt(bytesDone: number): this {
    this.done = bytesDone;
    this.bytes[(this.head - 1 + SAMPLES) % SAMPLES] = bytesDone;
    return this;
  }

  /** Emits the phase's final report regardless of the throttle, with `bytesDone` when given. */
  finish(bytesDone: number = this.done): void {
    this.done = bytesDone;
    const t = this.now();
    this.sample(t, this.done);
    this.emit(this.report(t));
  }

  private sample(t: number, bytesDone: number): void {
    this.times[this.head] = t;
    this.bytes[this.head] = bytesDone;
    this.head = (this.head + 1) % SAMPLES;
    this.count = Math.min(this.count + 1, SAMPLES);
  }

  private report(t: number): Progress {
    // The oldest sample still inside the window, or the oldest we have.
    let oldest = (this.head - this.count + SAMPLES) % SAMPLES;
    for (let i = 0; i < this.count - 1; i++) {
      const index = (this.head - this.count + i + SAMPLES) % SAMPLES;
      if (t - (this.times[index] ?? 0) <= SPEED_WINDOW_MS) break;
      oldest = (index + 1) % SAMPLES;
    }
    const dt = (t - (this.times[oldest] ?? t)) / 1000;
    const speed = dt > 0 ? (this.done - (this.bytes[oldest] ?? 0)) / dt : 0;
    const eta = this.total !== null && speed > 0 ? Math.max(0, (this.total - this.done) / speed) : null;
    return { phase: this.phase, target: this.target, bytesDone: this.done, bytesTotal: this.total, speed, eta };
  }
}
