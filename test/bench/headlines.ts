/**
 * The README's figures come from the bench, never from a hand: a section that measures one of its
 * rows leaves a line (an HTML comment, unseen on the rendered page) in its text in
 * docs/benchmarks.md, and `--write-docs` rebuilds the README's tables from those lines: the
 * comparison table from every headline, and each other table (between `<!-- bench:NAME -->`
 * markers, its header kept) from the rows a section left for NAME.
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
const ROW = /<!-- row ([a-z-]+) (\[.*?\]) -->/g;
const BLOCK = /<!-- bench:([a-z-]+) -->\n([\s\S]*?)\n<!-- \/bench:\1 -->/g;
const BEGIN = '<!-- bench:headlines -->';
const END = '<!-- /bench:headlines -->';

/** The line a section adds to its text for one README row. */
export function headline(job: string, reference: string, referenceSeconds: number, sluiceSeconds: number): string {
  const entry: Headline = { job, reference, ratio: referenceSeconds / sluiceSeconds };
  return `<!-- headline ${JSON.stringify(entry)} -->`;
}

/** The line a section adds to its text for one row of the README's table `table`. */
export function readmeRow(table: string, cells: readonly string[]): string {
  return `<!-- row ${table} ${JSON.stringify(cells)} -->`;
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

/** Each table's rows in a page, by table name, in their order. */
function rowsIn(page: string): Map<string, string[]> {
  const rows = new Map<string, string[]>();
  for (const [, table = '', cells = '[]'] of page.matchAll(ROW)) {
    const row = `| ${(JSON.parse(cells) as string[]).map(cell).join(' | ')} |`;
    rows.set(table, [...(rows.get(table) ?? []), row]);
  }
  return rows;
}

/**
 * The README with its tables rebuilt from `benchmarks`: the comparison table from the headlines,
 * and every other `bench:NAME` table's rows from the rows left for NAME (its first two lines, the
 * header, kept; a table no section has left rows for stays as it is).
 */
export function readmeWithHeadlines(readme: string, benchmarks: string): string {
  const begin = readme.indexOf(BEGIN);
  const end = readme.indexOf(END);
  if (begin < 0 || end < begin) throw new Error(`README.md has no ${BEGIN} … ${END} block for the bench's table`);
  const rows = rowsIn(benchmarks);
  const withHeadlines = `${readme.slice(0, begin + BEGIN.length)}\n${headlineTable(headlinesIn(benchmarks))}\n${readme.slice(end)}`;
  return withHeadlines.replace(BLOCK, (block, name: string, body: string) => {
    const fresh = rows.get(name);
    if (name === 'headlines' || fresh === undefined) return block;
    const header = body.split('\n').slice(0, 2);
    return [`<!-- bench:${name} -->`, ...header, ...fresh, `<!-- /bench:${name} -->`].join('\n');
  });
}

/** Rewrites the README's tables from docs/benchmarks.md. */
export function writeReadmeHeadlines(readmePath: string, benchmarksPath: string): void {
  const readme = readFileSync(readmePath, 'utf8');
  writeFileSync(readmePath, readmeWithHeadlines(readme, readFileSync(benchmarksPath, 'utf8')));
}
