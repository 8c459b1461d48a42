/**
 * The README's comparison table comes from the bench, never from a hand: a section that measures
 * one of its rows leaves a headline (an HTML comment, unseen on the rendered page) in its text in
 * docs/benchmarks.md, and `--write-docs` rebuilds the README's table from every headline there.
 */
import { readFileSync, writeFileSync } from 'node:fs';

export interface Headline {
  /** What was done, e.g. "1 GiB raw image, write and verify". */
  job: string;
  /** What it was compared with, e.g. "etcher-sdk 10". */
  reference: string;
  /** The reference's time over Sluice's: above 1, Sluice is faster. */
  ratio: number;
}

const PATTERN = /<!-- headline (\{.*?\}) -->/g;
const BEGIN = '<!-- bench:headlines -->';
const END = '<!-- /bench:headlines -->';

/** The line a section adds to its text for one README row. */
export function headline(job: string, reference: string, referenceSeconds: number, sluiceSeconds: number): string {
  const entry: Headline = { job, reference, ratio: referenceSeconds / sluiceSeconds };
  return `<!-- headline ${JSON.stringify(entry)} -->`;
}

/** Every headline in a page, in its order. */
export function headlinesIn(page: string): Headline[] {
  return [...page.matchAll(PATTERN)].map((match) => JSON.parse(match[1] ?? '{}') as Headline);
}

const cell = (text: string) => text.replaceAll('|', '\\|');

/** The README's table of headlines. */
export function headlineTable(headlines: readonly Headline[]): string {
  return [
    '| job | reference | ratio |',
    '|---|---|---:|',
    ...headlines.map(({ job, reference, ratio }) => `| ${cell(job)} | ${cell(reference)} | ${ratio.toFixed(2)}× |`),
  ].join('\n');
}

/** The README with its table between the headline markers rebuilt from `benchmarks`' headlines. */
export function readmeWithHeadlines(readme: string, benchmarks: string): string {
  const begin = readme.indexOf(BEGIN);
  const end = readme.indexOf(END);
  if (begin < 0 || end < begin) throw new Error(`README.md has no ${BEGIN} … ${END} block for the bench's table`);
  return `${readme.slice(0, begin + BEGIN.length)}\n${headlineTable(headlinesIn(benchmarks))}\n${readme.slice(end)}`;
}

/** Rewrites the README's table from docs/benchmarks.md. */
export function writeReadmeHeadlines(readmePath: string, benchmarksPath: string): void {
  const readme = readFileSync(readmePath, 'utf8');
  writeFileSync(readmePath, readmeWithHeadlines(readme, readFileSync(benchmarksPath, 'utf8')));
}
