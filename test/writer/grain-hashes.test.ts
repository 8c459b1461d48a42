import { describe, expect, it } from 'vitest';
import { GiB, KiB, MiB } from '../../common/domain/units.js';
import { chooseGrain, MAX_GRAIN, MIN_GRAIN } from '../../writer/grain-hashes.js';

describe('chooseGrain', () => {
  it('stays at the minimum for card-sized images and grows for huge ones, within bounds', () => {
    expect(chooseGrain(0)).toBe(MIN_GRAIN);
    expect(chooseGrain(32 * GiB)).toBe(MIN_GRAIN);
    expect(chooseGrain(128 * GiB)).toBe(512 * KiB);
    expect(chooseGrain(4096 * GiB)).toBe(MAX_GRAIN);
    expect(MAX_GRAIN).toBe(1 * MiB);
  });
});
