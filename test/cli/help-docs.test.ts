/**
 * docs/cli.md and `sluice --help` name the same flags and commands: a flag the page documents
 * exists, and one the command takes is documented.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { CLI } from '../support/cli.js';

function help(): string {
  const run = spawnSync(process.execPath, [CLI, '--help'], { encoding: 'utf8' });
  expect(run.status).toBe(0);
  return run.stdout;
}

/** Every long flag a text names, e.g. --no-verify. */
function flags(text: string): string[] {
  return [...new Set(text.match(/(?<![\w-])--[a-z][a-z0-9-]*/g) ?? [])].sort();
}

/** Every command a text names, e.g. station-csv in `sluice station-csv LOG`. */
function commands(text: string): string[] {
  return [...new Set([...text.matchAll(/\bsluice ([a-z][a-z-]*)/g)].map((match) => match[1] ?? ''))].sort();
}

const page = readFileSync('docs/cli.md', 'utf8');

it('every flag in docs/cli.md is in sluice --help, and every flag in sluice --help is in docs/cli.md', () => {
  const inHelp = flags(help());
  expect(inHelp.length).toBeGreaterThan(30);
  expect(flags(page)).toEqual(inHelp);
});

it('docs/cli.md and sluice --help name the same commands', () => {
  const inHelp = commands(help());
  expect(inHelp).toContain('station-csv');
  expect(commands(page)).toEqual(inHelp);
});
