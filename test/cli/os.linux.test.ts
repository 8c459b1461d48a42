/**
 * `sluice os list|boards` and `sluice cache list|clear`: the catalogue served on 127.0.0.1
 * (test/support/catalogue.ts), read by the built CLI, filtered by board as Imager filters it.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveCatalogue, type CatalogueServer } from '../support/catalogue.js';
import { collect, spawnCli, type CliRun } from '../support/cli.js';

let dir: string;
let server: CatalogueServer;
let env: Record<string, string>;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sluice-os-'));
  server = await serveCatalogue(dir);
  env = { SLUICE_CACHE_DIR: join(dir, 'cache') };
});

afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

function cli(args: string[]): Promise<CliRun> {
  return collect(spawnCli(args, { env }));
}

async function paths(flags: string[]): Promise<string[]> {
  const run = await cli(['os', 'list', '--json', '--repo', server.top, ...flags]);
  expect(run.code, run.stderr).toBe(0);
  return (JSON.parse(run.stdout) as { entries: { path: string[] }[] }).entries.map((e) => e.path.join('/'));
}

describe('sluice os list', () => {
  it('lists every entry of the whole tree by its path, and says on stderr what was skipped', async () => {
    const run = await cli(['os', 'list', '--repo', server.top]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.split('\n')[0]).toMatch(/^ENTRY\s+RELEASED\s+DOWNLOAD\s+WRITES$/);
    expect(run.stdout).toMatch(/^Other systems\/Rescue\/Test OS Rescue\s+2026-11-19\s+[\d.]+ MB\s+16\.8 MB$/m);
    expect(run.stderr).toMatch(/sluice: note: .*\("Broken entry"\) skipped: extract_sha256/);
    expect(run.stderr).toMatch(/sluice: note: .*\("Board without tags"\) skipped: tags: missing\./);
    expect(await paths([])).toEqual([
      'Test OS Lite',
      'Other systems/Test OS Desktop',
      'Other systems/Rescue/Test OS Rescue',
      'Generic/Test OS Generic',
    ]);
  });

  it('filters by board as Imager does: an exclusive board by name, an inclusive one by a tag', async () => {
    // Board A (exclusive): entries naming board-a or board-a-64; the entry naming no boards is left out.
    expect(await paths(['--device', 'board a'])).toEqual(['Test OS Lite', 'Other systems/Test OS Desktop']);
    // Board B (inclusive): entries naming board-b, and the one naming no boards.
    expect(await paths(['--device', 'board-b'])).toEqual([
      'Other systems/Test OS Desktop',
      'Other systems/Rescue/Test OS Rescue',
      'Generic/Test OS Generic',
    ]);
  });

  it('refuses a board it does not know, naming those it does', async () => {
    const run = await cli(['os', 'list', '--repo', server.top, '--device', 'Board C']);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/the catalogue has no board or device tag "Board C"; its boards: Board A, Board B/);
  });

  it('marks the entries the image cache holds', async () => {
    const images = join(dir, 'cache', 'images');
    mkdirSync(images, { recursive: true });
    writeFileSync(join(images, server.images.desktop.downloadSha256), 'x');
    const run = await cli(['os', 'list', '--repo', server.top]);
    expect(run.stdout).toMatch(/^Other systems\/Test OS Desktop\s+.*\s+cached$/m);
    expect(run.stdout).toMatch(/^Test OS Lite\s+2026-11-19\s+[\d.]+ MB\s+16\.8 MB$/m);
    rmSync(join(dir, 'cache'), { recursive: true });
  });

  it('reads a local file given as --repo, and says why a repository cannot be read', async () => {
    const local = await cli(['os', 'list', '--json', '--repo', join(dir, 'os_list_v4.json')]);
    expect(local.code, local.stderr).toBe(0);
    expect((JSON.parse(local.stdout) as { entries: { url: string }[] }).entries[0]?.url).toBe('/images/lite.img.xz');
    const missing = await cli(['os', 'list', '--repo', `${server.base}/nope.json`]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/nope\.json failed: the server answered 404 Not Found/);
  });
});

describe('sluice os boards', () => {
  it('lists the boards with their tags and matching type', async () => {
    const run = await cli(['os', 'boards', '--repo', server.top]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^Board A\s+board-a,board-a-64\s+exclusive$/m);
    expect(run.stdout).toMatch(/^Board B\s+board-b\s+inclusive$/m);
  });
});

describe('sluice cache list|clear', () => {
  it('lists complete and partial downloads with their names, and clears them', async () => {
    const images = join(dir, 'cache', 'images');
    mkdirSync(images, { recursive: true });
    const key = server.images.lite.downloadSha256;
    writeFileSync(join(images, `${key}.part`), Buffer.alloc(1000));
    writeFileSync(
      join(images, `${key}.json`),
      JSON.stringify({
        name: 'Test OS Lite',
        url: 'https://x/lite.img.xz',
        size: 4000,
        checks: 'download',
        lastUsed: Date.UTC(2026, 10, 24, 4, 34),
      }),
    );
    const text = await cli(['cache', 'list']);
    expect(text.stdout).toContain(`Image cache: ${join(dir, 'cache')}`);
    expect(text.stdout).toMatch(
      new RegExp(
        `^  ${key.slice(0, 12)}  Test OS Lite\\s+1.0 KB  partial, 25% of 4.0 KB, last used 2026-11-24 04:34 UTC$`,
        'm',
      ),
    );
    const json = JSON.parse((await cli(['cache', 'list', '--json'])).stdout) as {
      entries: { key: string; complete: boolean; bytes: number }[];
    };
    expect(json.entries).toMatchObject([{ key, complete: false, bytes: 1000 }]);
    const cleared = await cli(['cache', 'clear', '--json']);
    expect(JSON.parse(cleared.stdout)).toMatchObject({ removed: 1, bytes: 1000 });
    expect((await cli(['cache', 'list'])).stdout).toContain('It holds no images.');
  });
});

describe('the command line', () => {
  it.each([
    [['list', '--device', 'x'], '--device is an option of os list'],
    [['list', '--repo', 'x'], '--repo is an option of os, flash, verify and info'],
    [['os', 'list', '--no-cache'], '--no-cache is an option of flash and verify'],
    [['os', 'frobnicate'], 'os takes list or boards'],
    [['cache'], 'cache takes list or clear'],
    [
      ['flash', 'os:x', '/dev/null', '--cache-limit', 'lots'],
      '--cache-limit takes a size such as 20G or 500M, not "lots"',
    ],
  ])('refuses %j', async (args, words) => {
    const run = await cli(args);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(words);
  });
});
