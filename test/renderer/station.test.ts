import { describe, expect, it } from 'vitest';
import type { StationRow } from '../../common/domain/station.js';
import {
  batchLine,
  rowDrive,
  rowFraction,
  rowLimit,
  rowPhase,
  rowSpeed,
  withPeak,
  withRow,
} from '../../renderer/src/station.js';

function row(id: number, overrides: Partial<StationRow> = {}): StationRow {
  return {
    id,
    card: id,
    slot: `/dev/disk/by-path/usb-${id}`,
    device: `/dev/sd${id}`,
    model: 'SanDisk Ultra',
    serial: 'AA11',
    capacity: 32e9,
    hostname: `pi-${id}`,
    phase: 'queued',
    progress: null,
    result: null,
    code: null,
    message: null,
    startedAt: new Date(0).toISOString(),
    endedAt: null,
    ...overrides,
  };
}

describe('the station screen’s rows', () => {
  it('keep one row per id, newest first, each with its latest report', () => {
    let rows = withRow([], row(1));
    rows = withRow(rows, row(2));
    rows = withRow(rows, row(1, { phase: 'writing', progress: { bytesDone: 1, bytesTotal: 4, speed: 2e7, eta: 3 } }));
    expect(rows.map((r) => [r.id, r.phase])).toEqual([
      [2, 'queued'],
      [1, 'writing'],
    ]);
  });

  it('say the phase while running and the outcome once done', () => {
    const writing = row(1, { phase: 'writing', progress: { bytesDone: 1, bytesTotal: 4, speed: 2e7, eta: 3 } });
    expect([rowPhase(writing), rowFraction(writing), rowSpeed(writing)]).toEqual(['Writing', 0.25, '20.0 MB/s']);
    expect(rowPhase(row(2, { phase: 'preparing' }))).toBe('Preparing');
    expect(rowPhase(row(3))).toBe('Waiting for a free slot');
    const done = row(4, { phase: 'done', result: 'ok', progress: { bytesDone: 4, bytesTotal: 4, speed: 2e7, eta: 0 } });
    expect([rowPhase(done), rowFraction(done), rowSpeed(done)]).toEqual(['Done: insert the next card', null, '']);
    expect(rowPhase(row(5, { phase: 'done', result: 'refused' }))).toBe('Refused');
    expect(rowPhase(row(6, { phase: 'done', result: 'failed' }))).toBe('Failed');
    expect(rowPhase(row(7, { phase: 'done', result: 'cancelled' }))).toBe('Cancelled');
    expect(
      rowFraction(row(8, { phase: 'writing', progress: { bytesDone: 9, bytesTotal: null, speed: 0, eta: null } })),
    ).toBeNull();
  });

  it('say what limits a running row once the helper has measured it, in the flash progress words', () => {
    const progress = { bytesDone: 1, bytesTotal: 4, speed: 2e7, eta: 3 };
    expect(rowLimit(row(1, { phase: 'writing', progress }))).toBe('');
    expect(
      rowLimit(
        row(1, { phase: 'writing', progress: { ...progress, limit: { by: 'drive', driveWait: 0.9, sourceWait: 0 } } }),
      ),
    ).toBe('limited by the drive');
    expect(
      rowLimit(
        row(1, {
          phase: 'decompressing',
          progress: { ...progress, limit: { by: 'source', driveWait: 0, sourceWait: 0.7 } },
        }),
      ),
    ).toBe('limited by decompression');
    expect(
      rowLimit(
        row(1, { phase: 'writing', progress: { ...progress, limit: { by: 'source', driveWait: 0, sourceWait: 0.7 } } }),
      ),
    ).toBe('limited by reading the image');
    expect(
      rowLimit(
        row(1, {
          phase: 'done',
          result: 'ok',
          progress: { ...progress, limit: { by: 'drive', driveWait: 0.9, sourceWait: 0 } },
        }),
      ),
    ).toBe('');
  });

  it('name the drive by model, serial and capacity, leaving out what the OS did not say', () => {
    expect(rowDrive(row(1))).toBe('SanDisk Ultra · SN AA11 · 32.0 GB');
    expect(rowDrive(row(1, { model: null, serial: null, capacity: null }))).toBe('Unnamed drive');
  });

  it('sum up the batch: the cards writing, their speed in all, against what each reached at best', () => {
    const writing = (id: number, speed: number) =>
      row(id, { phase: 'writing', progress: { bytesDone: 1, bytesTotal: 4, speed, eta: 3 } });
    let peaks: ReadonlyMap<number, number> = new Map();
    for (const r of [writing(1, 8e6), writing(2, 8e6), writing(1, 6e6), writing(2, 2e6)]) peaks = withPeak(peaks, r);
    const rows = [writing(1, 6e6), writing(2, 2e6), row(3, { phase: 'done', result: 'ok' }), row(4)];
    expect(batchLine(rows, peaks)).toBe(
      '2 cards writing: 8.0 MB/s in all, of 16.0 MB/s they reached each at best (50%)',
    );
    expect(batchLine([row(3, { phase: 'done', result: 'ok' })], peaks)).toBe('');
    // A row's peak moves only up, and only while it writes.
    expect(
      withPeak(peaks, row(1, { phase: 'verifying', progress: { bytesDone: 1, bytesTotal: 4, speed: 9e8, eta: 0 } })),
    ).toBe(peaks);
  });
});
