import { describe, expect, it } from 'vitest';
import { LimitMeter } from '../../writer/limit-meter.js';

function meter() {
  let now = 0;
  const m = new LimitMeter(() => now);
  return { m, advance: (ms: number) => (now += ms) };
}

describe('LimitMeter', () => {
  it('says nothing before half a second of writing is measured', () => {
    const { m, advance } = meter();
    advance(400);
    m.waited(400, 0);
    expect(m.current()).toBeUndefined();
    advance(200);
    m.waited(200, 0);
    expect(m.current()).toEqual({ by: 'source', sourceWait: 1, driveWait: 0 });
  });

  it('names the side waited for, with the shares of the time each side waited', () => {
    const { m, advance } = meter();
    // 100 ms turns: the drive writes for 100 ms while the next bytes were ready after 20.
    for (let i = 0; i < 20; i++) {
      advance(100);
      m.waited(0, 80);
    }
    expect(m.current()).toEqual({ by: 'drive', sourceWait: 0, driveWait: 0.8 });
  });

  it('follows a change within its 3 s window: a card fast at first, then a download that slows down', () => {
    const { m, advance } = meter();
    for (let i = 0; i < 50; i++) {
      advance(100);
      m.waited(0, 90);
    }
    expect(m.current()?.by).toBe('drive');
    for (let i = 0; i < 40; i++) {
      advance(100);
      m.waited(70, 0);
    }
    // Only the last 3 s count: all of them waited for the source.
    expect(m.current()).toEqual({ by: 'source', sourceWait: 0.7, driveWait: 0 });
  });

  it('keeps its window at any speed: thousands of short turns a second do not shorten it', () => {
    const { m, advance } = meter();
    for (let i = 0; i < 5000; i++) {
      advance(1);
      m.waited(i < 2000 ? 0.9 : 0, i < 2000 ? 0 : 0.5);
    }
    // The last 3 s: 3000 turns of 1 ms, each with the source's bytes waiting half of it.
    const limit = m.current();
    expect(limit?.by).toBe('drive');
    expect(limit?.driveWait).toBeCloseTo(0.5, 1);
    expect(limit?.sourceWait).toBeLessThan(0.05);
  });
});
