import type { Progress } from '../domain/progress.js';

/**
 * What feeds the writer, as the person flashing knows it: a download (decoded on the way, if it is
 * compressed), a decoder of a local file, or the image read as it is (a raw file, a drive cloned).
 */
export type SourceStage = 'downloading' | 'decompressing' | 'reading';

/**
 * The stage of an image read from `location` in `format`. A compressed download is limited by
 * the download unless its decoder lags behind it (`decoderBehind`: downloaded bytes wait to be
 * decoded).
 */
export function sourceStage(location: 'url' | 'file' | 'drive', format: string, decoderBehind: boolean): SourceStage {
  if (format === 'raw') return location === 'url' ? 'downloading' : 'reading';
  return location === 'url' && !decoderBehind ? 'downloading' : location === 'drive' ? 'reading' : 'decompressing';
}

/**
 * The writer's report as the person flashing should read it: while the writer waits for its
 * source, the phase is the source's own stage (downloading, decompressing), since that is what
 * the job is doing at the speed shown. The helper cannot name it: it only sees a descriptor.
 */
export function staged(progress: Progress, stage: SourceStage): Progress {
  if (progress.phase !== 'writing' || progress.limit?.by !== 'source' || stage === 'reading') return progress;
  return { ...progress, phase: stage };
}

/**
 * The phase a log line names: writing named by what limits it (downloading, decompressing) is
 * still writing, and a line each time the limit changed sides would be noise.
 */
export function loggedPhase<P extends string>(phase: P): P | 'writing' {
  return phase === 'downloading' || phase === 'decompressing' ? 'writing' : phase;
}

/** "limited by the drive", or by the download, decompression or reading the image; null before it is measured. */
export function limitWords(progress: Progress): string | null {
  const limit = progress.limit;
  if (limit === undefined) return null;
  if (limit.by === 'drive') return 'limited by the drive';
  switch (progress.phase) {
    case 'downloading':
      return 'limited by the download';
    case 'decompressing':
      return 'limited by decompression';
    default:
      return 'limited by reading the image';
  }
}

/** The measure behind limitWords, for the progress screen: "the drive waited for the image's next bytes 81% of the time". */
export function waitWords(progress: Progress): string | null {
  const limit = progress.limit;
  if (limit === undefined) return null;
  const percent = (share: number) => `${Math.round(share * 100)}%`;
  return limit.by === 'drive'
    ? `the image's next bytes waited for the drive ${percent(limit.driveWait)} of the time`
    : `the drive waited for the image's next bytes ${percent(limit.sourceWait)} of the time`;
}
