/**
 * What a flash job is doing. `decompressing` is reported by the decoder side while the
 * writer has not yet received bytes; the writer itself reports the other three.
 */
export type Phase = 'decompressing' | 'writing' | 'syncing' | 'verifying';

/** One progress report for one target. Emitted at most about 10 times a second. */
export interface Progress {
  phase: Phase;
  /** The target device this report is about. */
  target: string;
  /** Image bytes done in this phase. */
  bytesDone: number;
  /** Image bytes this phase will cover in all; null when the image size is not known in advance. */
  bytesTotal: number | null;
  /** Bytes per second, averaged over the last few seconds. */
  speed: number;
  /** Seconds left in this phase; null when the total is unknown or the speed not yet measurable. */
  eta: number | null;
}
