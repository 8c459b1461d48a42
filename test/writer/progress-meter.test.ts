import { describe, expect, it } from 'vitest';
import type { Progress } from '../../common/domain/progress.js';
import { PROGRESS_INTERVAL_MS, ProgressMeter } from '../../writer/progress-meter.js';

function meter(total: number | null) {
  let now = 0;
  const reports: Progress[] = [];
  const m = new ProgressMeter(
    'writing',
    '/dev/sdz',
    total,
    (p) => reports.push(p),
    () => now,
  );
  return { m, reports, advance: (ms: number) => (now += ms) };
}

describe('ProgressMeter', () => {
  it('emits at most once per interval, however often it is updated', () => {
    const { m, reports, advance } = meter(1000);
    for (let i = 1; i <= 100; i++) {
      advance(10); // 100 updates over one second
      m.update(i * 10);
    }
    expect(reports.length).toBeLessThanOrEqual(1000 / PROGRESS_INTERVAL_MS + 1);
    expect(reports.length).toBeGreaterThanOrEqual(1000 / PROGRESS_INTERVAL_MS - 1);
  });

  it('measures speed over its window and derives the ETA from it', () => {
    const { m, reports, advance } = meter(100_000_000);
    for (let s = 1; s <= 10; s++) {
      advance(1000);
      m.update(s * 5_000_000); // a steady 5 MB/s
    }
    const last = reports.at(-1);
    expect(last?.speed).toBeCloseTo(5_000_000, -3);
    expect(last?.eta).toBeCloseTo(10, 0); // 50 MB left at 5 MB/s
  });

  it('has no ETA when the total is unknown, and finish() always reports', () => {
    const { m, reports, advance } = meter(null);
    advance(500);
    m.update(42);
    m.finish();
    expect(reports.at(-1)).toMatchObject({
      bytesDone: 42,
      bytesTotal: null,
      eta: null,
      phase: 'writing',
      target: '/dev/sdz',
    });
    expect(reports).toHaveLength(2);
  });

  it('counts bytes done before it started as done, not in the speed, and finish() takes the last count', () => {
    const { m, reports, advance } = meter(110_000_000);
    m.startAt(10_000_000);
    for (let s = 1; s <= 4; s++) {
      advance(1000);
      m.update(10_000_000 + s * 5_000_000);
    }
    expect(reports.at(-1)?.speed).toBeCloseTo(5_000_000, -3);
    expect(reports.at(-1)?.eta).toBeCloseTo(16, 0); // 80 MB left at 5 MB/s
    m.finish(110_000_000);
    expect(reports.at(-1)).toMatchObject({ bytesDone: 110_000_000, eta: 0 });
  });
});
