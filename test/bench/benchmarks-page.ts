/**
 * docs/benchmarks.md, written only by `npm run bench -- --write-docs`. Each section is kept between
 * markers with the date and machine of the run that measured it, so a run of some sections
 * (BENCH_SECTIONS=many) replaces those and keeps the others: a quiet machine is rarely quiet for
 * the whole bench, and each figure says when and where it was taken.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

const TITLE = '# Sluice benchmarks';
const ABOUT =
  'Written by `npm run bench -- --write-docs` (all sections) or `BENCH_SECTIONS=a,b npm run bench -- --write-docs` (those sections; the others stay as they were). Not edited by hand. Each section names the run that measured it.';

const begin = (name: string) => `<!-- bench:${name} -->`;
const end = (name: string) => `<!-- /bench:${name} -->`;

/** The sections of an earlier page, by name; a page without markers gives none. */
function sectionsOf(page: string): Map<string, string> {
  const found = new Map<string, string>();
  for (const match of page.matchAll(/<!-- bench:([a-z]+) -->\n([\s\S]*?)\n<!-- \/bench:\1 -->/g)) {
    const [, name, body] = match;
    if (name !== undefined && body !== undefined) found.set(name, body);
  }
  return found;
}

/**
 * The page with this run's sections (name → text) in place of the earlier ones, in `order`.
 * `run` is the one line that says when, on what and with which Node this run measured.
 */
export function benchmarksPage(earlier: string, order: readonly string[], fresh: Map<string, string>, run: string) {
  const kept = sectionsOf(earlier);
  const blocks = order.flatMap((name) => {
    const text = fresh.get(name);
    const body = text === undefined ? kept.get(name) : `_${run}_\n\n${text}`;
    return body === undefined ? [] : [`${begin(name)}\n${body}\n${end(name)}`];
  });
  return `${[TITLE, ABOUT, ...blocks].join('\n\n')}\n`;
}

/** Writes `path` from what it held and this run's sections. */
export function writeBenchmarksPage(path: string, order: readonly string[], fresh: Map<string, string>, run: string) {
  const earlier = existsSync(path) ? readFileSync(path, 'utf8') : '';
  writeFileSync(path, benchmarksPage(earlier, order, fresh, run));
}
