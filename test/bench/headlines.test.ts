import { describe, expect, it } from 'vitest';
import { headline, headlinesIn, readmeWithHeadlines } from './headlines.js';

describe("the README's comparison table, from the bench's headlines", () => {
  it('rebuilds the table from the headlines of docs/benchmarks.md, in their order, and keeps the rest', () => {
    const benchmarks = [
      '### raw',
      headline('1 GiB raw image', 'etcher-sdk 10', 3, 2),
      '### formats',
      headline('1 GiB OS image as `.gz`', '`gzip -dc | dd` + read-back', 7.12, 2),
    ].join('\n');
    const readme = 'intro\n<!-- bench:headlines -->\n| old |\n<!-- /bench:headlines -->\nafter\n';
    const page = readmeWithHeadlines(readme, benchmarks);
    expect(page).toBe(
      [
        'intro',
        '<!-- bench:headlines -->',
        '| job | reference | ratio |',
        '|---|---|---:|',
        '| 1 GiB raw image | etcher-sdk 10 | 1.50× |',
        '| 1 GiB OS image as `.gz` | `gzip -dc \\| dd` + read-back | 3.56× |',
        '<!-- /bench:headlines -->',
        'after',
        '',
      ].join('\n'),
    );
    expect(headlinesIn(page)).toEqual([]);
  });

  it('refuses a README without the block, rather than losing the table', () => {
    expect(() => readmeWithHeadlines('no block here', headline('a', 'b', 1, 1))).toThrow(/bench:headlines/);
  });
});
