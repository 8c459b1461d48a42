import { describe, expect, it } from 'vitest';
import { headline, headlinesIn, readmeRow, readmeWithHeadlines } from './headlines.js';

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

  it("fills another table's rows from the rows left for it, keeps its header, and leaves a table without rows alone", () => {
    const benchmarks = [
      headline('a', 'b', 2, 1),
      readmeRow('many-cards', ['1 card', '6.1 s']),
      readmeRow('many-cards', ['16 cards', '1.08× | one card']),
    ].join('\n');
    const readme = [
      '<!-- bench:headlines -->',
      '<!-- /bench:headlines -->',
      '<!-- bench:many-cards -->',
      '| batch | time |',
      '|---|---:|',
      '| 1 card | 9.9 s |',
      '<!-- /bench:many-cards -->',
      '<!-- bench:station -->',
      '| run | time |',
      '|---|---:|',
      '| old | 1 s |',
      '<!-- /bench:station -->',
      '',
    ].join('\n');
    const page = readmeWithHeadlines(readme, benchmarks);
    expect(page).toContain(
      [
        '<!-- bench:many-cards -->',
        '| batch | time |',
        '|---|---:|',
        '| 1 card | 6.1 s |',
        '| 16 cards | 1.08× \\| one card |',
        '<!-- /bench:many-cards -->',
      ].join('\n'),
    );
    expect(page).toContain('| old | 1 s |');
    expect(page).toContain('| a | b | 2.00× |');
  });

  it('refuses a README without the block, rather than losing the table', () => {
    expect(() => readmeWithHeadlines('no block here', headline('a', 'b', 1, 1))).toThrow(/bench:headlines/);
  });
});
