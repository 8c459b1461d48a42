import { describe, expect, it } from 'vitest';
import { formatBytes, formatDuration } from '../../../common/domain/units.js';

describe('formatBytes: powers of 1000, as printed on the card', () => {
  it.each<[number, string]>([
    [0, '0 B'],
    [999, '999 B'],
    [1000, '1.0 KB'],
    [31_914_983_424, '31.9 GB'],
    [128_000_000_000, '128 GB'],
  ])('%i → %s', (bytes, text) => expect(formatBytes(bytes)).toBe(text));
});

describe('formatDuration', () => {
  it.each<[number, string]>([
    [0, 'under 1 ms'],
    [0.0004, 'under 1 ms'],
    [0.012, '12 ms'],
    [0.0949, '95 ms'],
    [0.095, '0.1 s'],
    [0.37, '0.4 s'],
    [9.9, '9.9 s'],
    [42.4, '42 s'],
    [185, '3 min 05 s'],
    [3720, '1 h 02 min'],
  ])('%f → %s', (seconds, text) => expect(formatDuration(seconds)).toBe(text));
});
