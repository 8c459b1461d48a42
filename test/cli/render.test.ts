import { describe, expect, it } from 'vitest';
import { MiB } from '../../common/domain/units.js';
import { resultLine } from '../../cli/render.js';

describe('resultLine: the sentence a job ends with', () => {
  it('gives a flash faster than a tenth of a second its milliseconds, not "0.0 s" beside a speed', () => {
    const line = resultLine({ status: 'ok', target: '/dev/sdz', bytes: 16 * MiB, written: true, verified: true, seconds: 0.012 });
    expect(line).toBe('/dev/sdz: written and verified, 16.8 MB in 12 ms, 1.4 GB/s.');
  });

  it('says a cancelled drive is incomplete', () => {
    expect(resultLine({ status: 'cancelled', target: '/dev/sdz', bytes: MiB })).toBe('/dev/sdz: cancelled. The drive is incomplete; flash it again before use.');
  });
});
