/**
 * The README and docs/ hold together: every page in docs/ is linked from the README, and every
 * relative link in them reaches a file, and a heading where it names one.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { expect, it } from 'vitest';

const PAGES = [
  'README.md',
  ...readdirSync('docs')
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

/** A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces as hyphens. */
function anchors(page: string): string[] {
  return readFileSync(page, 'utf8')
    .split('\n')
    .filter((line) => line.startsWith('#'))
    .map((line) =>
      line
        .replace(/^#+\s*/, '')
        .trim()
        .toLowerCase()
        .replace(/[^\w\- ]/g, '')
        .replace(/ /g, '-'),
    );
}

function relativeLinks(page: string): string[] {
  return [...readFileSync(page, 'utf8').matchAll(/\]\(([^)\s]+)\)/g)]
    .map((match) => match[1] ?? '')
    .filter((link) => !/^[a-z]+:/.test(link));
}

it('every page in docs/ is linked from the README', () => {
  const linked = relativeLinks('README.md').map((link) => link.split('#')[0]);
  expect(PAGES.filter((page) => page !== 'README.md' && !linked.includes(page))).toEqual([]);
});

it('every relative link in the README and docs/ reaches a file, and the heading it names', () => {
  const broken = PAGES.flatMap((page) =>
    relativeLinks(page)
      .filter((link) => {
        const [path = '', anchor] = link.split('#');
        const target = path === '' ? page : normalize(join(dirname(page), path));
        return !existsSync(target) || (anchor !== undefined && !anchors(target).includes(anchor));
      })
      .map((link) => `${page}: ${link}`),
  );
  expect(PAGES.length).toBeGreaterThan(5);
  expect(broken).toEqual([]);
});
