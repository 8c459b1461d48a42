import { describe, expect, it } from 'vitest';
import { parseCount } from '../../cli/station-flags.js';
import { parseDriveSize as parseSize } from '../../common/domain/station.js';

describe('station flags', () => {
  it('reads sizes as on a card’s label (GB = 10^9) or in binary units', () => {
    expect(parseSize('8GB')).toBe(8e9);
    expect(parseSize('7.5 g')).toBe(7.5e9);
    expect(parseSize('30GiB')).toBe(30 * 2 ** 30);
    expect(parseSize('2TB')).toBe(2e12);
    expect(parseSize('4096')).toBe(4096);
    for (const bad of ['', 'GB', '-1', '8 GBs', '1e3', '9'.repeat(20)]) expect(parseSize(bad), bad).toBeNull();
  });

  it('counts whole cards, at least one', () => {
    expect(parseCount('12')).toBe(12);
    for (const bad of ['0', '-2', '1.5', 'ten', '']) expect(parseCount(bad), bad).toBeNull();
  });
});
