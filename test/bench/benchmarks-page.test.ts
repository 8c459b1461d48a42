import { describe, expect, it } from 'vitest';
import { benchmarksPage } from './benchmarks-page.js';

const ORDER = ['startup', 'raw', 'many'];

describe('docs/benchmarks.md from runs of some sections', () => {
  it('keeps the sections a run did not measure, with the line of the run that did', () => {
    const first = benchmarksPage(
      '',
      ORDER,
      new Map([
        ['startup', 'start A'],
        ['many', 'many A'],
      ]),
      'run 1',
    );
    const second = benchmarksPage(
      first,
      ORDER,
      new Map([
        ['many', 'many B'],
        ['raw', 'raw B'],
      ]),
      'run 2',
    );
    expect(second).toContain('_run 1_\n\nstart A');
    expect(second).toContain('_run 2_\n\nraw B');
    expect(second).toContain('_run 2_\n\nmany B');
    expect(second).not.toContain('many A');
    expect(second.indexOf('start A')).toBeLessThan(second.indexOf('raw B'));
    expect(second.indexOf('raw B')).toBeLessThan(second.indexOf('many B'));
  });

  it('drops what an earlier page held outside its sections', () => {
    const page = benchmarksPage('# old page\n\nfree text', ORDER, new Map([['raw', 'raw A']]), 'run 1');
    expect(page).not.toContain('free text');
    expect(page).toContain('raw A');
  });
});
