import { describe, expect, it } from 'vitest';
import { limitWords, sourceStage, staged, waitWords } from '../../../common/app/bottleneck.js';
import type { Progress } from '../../../common/domain/progress.js';
import { progressLine } from '../../../cli/render.js';

const writing: Progress = {
  phase: 'writing',
  target: '/dev/sdz',
  bytesDone: 50_000_000,
  bytesTotal: 100_000_000,
  speed: 4_000_000,
  eta: 12.5,
};
const sourceBound: Progress = { ...writing, limit: { by: 'source', sourceWait: 0.82, driveWait: 0 } };
const driveBound: Progress = { ...writing, limit: { by: 'drive', sourceWait: 0, driveWait: 0.91 } };

describe('the bottleneck, as the person flashing reads it', () => {
  it('names what feeds the writer: a download, a decoder, or the image as it is', () => {
    expect(sourceStage('url', 'raw', false)).toBe('downloading');
    expect(sourceStage('url', 'xz', false)).toBe('downloading');
    // Downloaded bytes queue up for a decoder slower than the network: decompression is what limits.
    expect(sourceStage('url', 'xz', true)).toBe('decompressing');
    expect(sourceStage('file', 'zstd', false)).toBe('decompressing');
    expect(sourceStage('file', 'qcow2', true)).toBe('decompressing');
    expect(sourceStage('file', 'raw', false)).toBe('reading');
    expect(sourceStage('drive', 'raw', false)).toBe('reading');
  });

  it('renames writing to the source’s stage only while the writer waits for its source', () => {
    expect(staged(sourceBound, 'downloading').phase).toBe('downloading');
    expect(staged(sourceBound, 'decompressing').phase).toBe('decompressing');
    expect(staged(sourceBound, 'reading').phase).toBe('writing');
    expect(staged(driveBound, 'downloading').phase).toBe('writing');
    expect(staged(writing, 'downloading').phase).toBe('writing');
    expect(staged({ ...sourceBound, phase: 'verifying' }, 'downloading').phase).toBe('verifying');
  });

  it('says which side limits the speed, and the measure behind it', () => {
    expect(limitWords(staged(sourceBound, 'downloading'))).toBe('limited by the download');
    expect(limitWords(staged(sourceBound, 'decompressing'))).toBe('limited by decompression');
    expect(limitWords(staged(sourceBound, 'reading'))).toBe('limited by reading the image');
    expect(limitWords(driveBound)).toBe('limited by the drive');
    expect(limitWords(writing)).toBeNull();
    expect(waitWords(driveBound)).toBe("the image's next bytes waited for the drive 91% of the time");
    expect(waitWords(sourceBound)).toBe("the drive waited for the image's next bytes 82% of the time");
  });

  it('ends the CLI progress line with it', () => {
    expect(progressLine(staged(sourceBound, 'decompressing'))).toMatch(
      /^Decompressing +\[#{15}\.{15}\]  50% +4\.0 MB\/s  ETA 13 s +limited by decompression$/,
    );
    expect(progressLine(driveBound)).toMatch(/limited by the drive$/);
    expect(progressLine(writing)).toMatch(/ETA 13 s$/);
    // However long the ETA's words, the limit stands apart from them.
    expect(progressLine({ ...driveBound, eta: 0.0001 })).toMatch(/ETA under 1 ms  limited by the drive$/);
  });
});
