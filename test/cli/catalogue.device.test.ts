/**
 * `sluice flash os:…`: an OS chosen from a catalogue served on 127.0.0.1 (test/support/catalogue.ts),
 * downloaded while it is written and kept in the image cache, flashed again from the cache with
 * the server stopped, resumed after a dropped connection, checked against the catalogue's
 * SHA-256s, and the cache kept under its limit. Each flash is compared with the image byte for byte
 * outside the image's free space, which is left out by default.
 */
import { createHash } from 'node:crypto';
import { closeSync, existsSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { MiB } from '../../common/domain/units.js';
import { detectPartitionTable, PARTITION_TABLE_BYTES } from '../../user/images/formats/partition-table.js';
import {
  catalogueDocuments,
  IMAGE_SIZE,
  serveCatalogue,
  type CatalogueServer,
  type TestImage,
} from '../support/catalogue.js';
import { collect, flashCli, resultsOf, spawnCli, verifyCli, type CliRun } from '../support/cli.js';
import { describeDevices } from '../support/device-suite.js';
import { createLoop, readBytes, scratchDir, smallTmpfs, type LoopDevice } from '../support/loop-device.js';
import { sh } from '../support/os-image.js';
import { differencesOutside, imageFreeSpace } from '../support/free-space.js';

describeDevices('sluice flash os:ENTRY: the catalogue, the image cache, and resumed downloads', () => {
  let dir: string;
  let server: CatalogueServer;
  let loop: LoopDevice;
  let cache: string;
  /** The variables every run gets: the test's own cache, and retries without a real network's pauses. */
  let env: Record<string, string>;

  beforeAll(async () => {
    dir = scratchDir();
    server = await serveCatalogue(dir);
    loop = createLoop({ size: IMAGE_SIZE + 4 * MiB, dir });
    cache = join(dir, 'cache');
    env = { SLUICE_CACHE_DIR: cache, SLUICE_RETRY_PAUSE_MS: '50' };
  });

  afterAll(() => server.close());

  const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

  function garbage(): Buffer {
    sh(dir, `dd if=/dev/urandom of=${loop.backing} bs=1M count=${IMAGE_SIZE / MiB} conv=notrunc status=none`);
    return readBytes(loop.backing, 0, PARTITION_TABLE_BYTES);
  }

  function flash(entry: string, flags: string[] = [], extraEnv: Record<string, string> = {}): Promise<CliRun> {
    return flashCli(`os:${entry}`, [loop.path], ['--no-eject', '--repo', server.top, ...flags], {
      env: { ...env, ...extraEnv },
    });
  }

  /** Written under the free-space rule (the default): every byte outside the image's free space is the image's. */
  async function expectWritten(run: CliRun, image: TestImage): Promise<void> {
    const result = resultsOf(run).get(loop.path);
    expect(result, run.stdout + run.stderr).toMatchObject({ status: 'ok', verified: true });
    expect((result?.bytes ?? 0) + (result?.skipped ?? 0)).toBe(IMAGE_SIZE);
    expect(
      differencesOutside(
        readBytes(loop.backing, 0, IMAGE_SIZE),
        readFileSync(image.raw),
        await imageFreeSpace(image.raw, scratchDir()),
      ),
    ).toEqual([]);
  }

  /** A flash that failed after it started leaves the first MiB (partition tables, boot code) zeros: the card cannot look bootable. */
  function expectBlankHead(): void {
    const head = readBytes(loop.backing, 0, 1 * MiB);
    expect(head.equals(Buffer.alloc(1 * MiB))).toBe(true);
    expect(detectPartitionTable(head.subarray(0, PARTITION_TABLE_BYTES))).not.toBe('gpt');
  }

  const cached = () => readdirSync(join(cache, 'images')).filter((name) => /^[0-9a-f]{64}$/.test(name));

  it('flashes an entry by its name, byte for byte, keeps the download in the cache, and notes the malformed entry', async () => {
    garbage();
    const before = server.requestsFor(server.images.lite.path);
    const run = await flash('Test OS Lite');
    await expectWritten(run, server.images.lite);
    expect(run.stderr).toMatch(/sluice: Test OS Lite: downloaded while it is written, and kept in the image cache\./);
    expect(run.stderr).toMatch(
      /sluice: note: .*os_list\[2\] \("Broken entry"\) skipped: extract_sha256: Invalid SHA-256/,
    );
    expect(run.events.find((e) => e.type === 'source')?.['checksum']).toMatchObject({
      sha256: server.images.lite.downloadSha256,
      from: 'the catalogue (image_download_sha256)',
    });
    // The probe's first bytes, its range reads of the xz index, and the download itself.
    expect(server.requestsFor(server.images.lite.path) - before).toBeGreaterThanOrEqual(2);
    expect(cached()).toEqual([server.images.lite.downloadSha256]);
    expect(sha(readFileSync(join(cache, 'images', server.images.lite.downloadSha256)))).toBe(
      server.images.lite.downloadSha256,
    );
  });

  it('compares a card with an entry from the cache, nothing downloaded, and names a changed byte; info shows the entry without keeping anything', async () => {
    // The card holds Test OS Lite, flashed and kept in the cache by the test before.
    const before = server.requestsFor(server.images.lite.path);
    const same = await verifyCli('os:Test OS Lite', loop.path, { env }, ['--repo', server.top]);
    expect(resultsOf(same).get(loop.path), same.stderr).toMatchObject({ status: 'ok', verified: true });
    expect(same.stderr).toMatch(/sluice: Test OS Lite: from the image cache, nothing to download\./);
    expect(server.requestsFor(server.images.lite.path) - before).toBe(0);

    // A byte the flash wrote (inside the partition table area), changed on the card.
    const changed = readBytes(loop.backing, 0x1c0, 1);
    const fd = openSync(loop.backing, 'r+');
    writeSync(fd, Buffer.from([changed[0]! ^ 0xff]), 0, 1, 0x1c0);
    closeSync(fd);
    const differs = await verifyCli('os:Test OS Lite', loop.path, { env }, ['--repo', server.top]);
    expect(differs.code).toBe(1);
    expect(resultsOf(differs).get(loop.path)).toMatchObject({
      status: 'failed',
      code: 'verify-mismatch',
      offset: 0x1c0,
    });

    sh(dir, 'rm -rf info-cache');
    const info = await collect(
      spawnCli(['info', '--json', '--repo', server.top, 'os:Test OS Lite'], {
        env: { ...env, SLUICE_CACHE_DIR: join(dir, 'info-cache') },
      }),
    );
    expect(info.code, info.stderr).toBe(0);
    expect(JSON.parse(info.stdout)).toMatchObject({
      name: 'Test OS Lite',
      format: 'xz',
      size: IMAGE_SIZE,
      checksum: { sha256: server.images.lite.downloadSha256, from: 'the catalogue (image_download_sha256)' },
    });
    expect(info.stderr).toMatch(/sluice: Test OS Lite: read from its web address\./);
    expect(existsSync(join(dir, 'info-cache', 'images', server.images.lite.downloadSha256))).toBe(false);
  });

  it('finds an entry by its path through two subitems_url documents, reading only those on the path', async () => {
    garbage();
    const other = server.requestsFor('/lists/other.json');
    const rescue = server.requestsFor('/lists/rescue.json');
    const run = await flash('Other systems/Rescue/Test OS Rescue');
    await expectWritten(run, server.images.rescue);
    expect(server.requestsFor('/lists/other.json') - other).toBe(1);
    expect(server.requestsFor('/lists/rescue.json') - rescue).toBe(1);
  });

  it('a connection cut at 40% is resumed from the byte it reached, and the card holds the image outside its free space', async () => {
    garbage();
    const path = server.images.desktop.path;
    const before = server.requestsFor(path);
    // The probe's first bytes and the decoder's download are both whole-file answers: each is cut.
    server.cutNext(path, 0.4, 2);
    const run = await flash('Test OS Desktop');
    await expectWritten(run, server.images.desktop);
    const notice = run.events.find((e) => e.type === 'notice');
    expect(String(notice?.['message'])).toMatch(
      /^The download broke off at byte \d+ \(.*\); asking again for the rest in 50 ms \(try 1 of 5\)\.$/,
    );
    expect(server.requestsFor(path) - before).toBeGreaterThanOrEqual(3);
    expect(cached()).toContain(server.images.desktop.downloadSha256);
  });

  it('a download that drops before its body starts is asked again, with the cache on and with --no-cache', async () => {
    const path = server.images.lite.path;
    const key = server.images.lite.downloadSha256;
    for (const flags of [[], ['--no-cache']]) {
      // Downloaded afresh, not read from the cache.
      for (const suffix of ['', '.json', '.part']) rmSync(join(cache, 'images', `${key}${suffix}`), { force: true });
      garbage();
      const before = server.requestsFor(path);
      // The probe reads its first bytes whole; the decoder's download gets the headers and no byte of the body.
      server.cutNext(path, 0, 1, 1);
      const run = await flash('Test OS Lite', flags);
      await expectWritten(run, server.images.lite);
      expect(
        run.events.some(
          (e) =>
            e.type === 'notice' &&
            /^The download broke off at byte 0 \(.*\); asking again .*\(try 1 of 5\)\.$/.test(String(e['message'])),
        ),
        run.stderr,
      ).toBe(true);
      expect(server.requestsFor(path) - before).toBeGreaterThanOrEqual(3);
      expect(existsSync(join(cache, 'images', key))).toBe(flags.length === 0);
    }
  });

  it('a plain URL (no catalogue) is resumed after a dropped connection too', async () => {
    garbage();
    server.cutNext(server.images.lite.path, 0.4, 2);
    const run = await flashCli(`${server.base}${server.images.lite.path}`, [loop.path], ['--no-eject'], { env });
    await expectWritten(run, server.images.lite);
    expect(run.events.filter((e) => e.type === 'notice')).toHaveLength(1);
  });

  it('a download that fails part-way is kept, and the next try resumes it from the cache', async () => {
    const path = server.images.rescue.path;
    // Resumed from nothing: the rescue image is in the cache already (it was flashed above), so take it out.
    const key = server.images.rescue.downloadSha256;
    for (const suffix of ['', '.json']) sh(cache, `rm -f images/${key}${suffix}`);
    garbage();
    server.breakAll(path, 0.4);
    const failed = await flash('Other systems/Rescue/Test OS Rescue');
    server.mend(path);
    expect(failed.code).toBe(1);
    expect(resultsOf(failed).get(loop.path)).toMatchObject({
      status: 'failed',
      code: 'source-truncated',
      message: expect.stringMatching(/5 more tries got no further, so Sluice gave up/),
    });
    const partial = join(cache, 'images', `${key}.part`);
    expect(readFileSync(partial).length).toBe(Math.floor(server.images.rescue.downloadSize * 0.4));
    const run = await flash('Other systems/Rescue/Test OS Rescue');
    await expectWritten(run, server.images.rescue);
    expect(
      run.events.some(
        (e) =>
          e.type === 'notice' &&
          /^Resuming the download at byte \d+: the bytes before it come from the cache/.test(String(e['message'])),
      ),
    ).toBe(true);
    expect(existsSync(partial)).toBe(false);
    expect(cached()).toContain(key);
  });

  it('an image whose decompressed SHA-256 is not the catalogue’s fails with the partition table area blank, and is not kept', async () => {
    const documents = catalogueDocuments(server.images) as Record<string, { os_list: Record<string, unknown>[] }>;
    const lite = documents['/os_list_v4.json']?.os_list[0] ?? {};
    // The download's own checksum is right; only the image inside is not what the catalogue says.
    server.put(
      '/wrong.json',
      Buffer.from(
        JSON.stringify({
          os_list: [{ ...lite, name: 'Wrong image', url: server.images.lite.path, extract_sha256: 'e'.repeat(64) }],
        }),
      ),
    );
    sh(cache, 'rm -rf images');
    garbage();
    const run = await flashCli('os:Wrong image', [loop.path], ['--no-eject', '--repo', `${server.base}/wrong.json`], {
      env,
    });
    expect(run.code).toBe(1);
    expect(resultsOf(run).get(loop.path)).toMatchObject({
      status: 'failed',
      code: 'source-checksum-mismatch',
      message: expect.stringMatching(
        /The decompressed image's SHA-256 is [0-9a-f]{64}, but the catalogue says e{64} \(extract_sha256\)/,
      ),
    });
    expectBlankHead();
    expect(existsSync(join(cache, 'images'))).toBe(true);
    expect(readdirSync(join(cache, 'images')).filter((name) => !name.endsWith('.json'))).toEqual([]);
  });

  it('an entry whose extract_sha256 is wrong is refused from a warm cache too', async () => {
    const documents = catalogueDocuments(server.images) as Record<string, { os_list: Record<string, unknown>[] }>;
    const lite = documents['/os_list_v4.json']?.os_list[0] ?? {};
    server.put(
      '/wrong-warm.json',
      Buffer.from(
        JSON.stringify({
          os_list: [{ ...lite, name: 'Wrong image', url: server.images.lite.path, extract_sha256: 'e'.repeat(64) }],
        }),
      ),
    );
    sh(cache, 'rm -rf images');
    garbage();
    await expectWritten(await flash('Test OS Lite'), server.images.lite);
    expect(cached()).toContain(server.images.lite.downloadSha256);
    garbage();
    const run = await flashCli(
      'os:Wrong image',
      [loop.path],
      ['--no-eject', '--repo', `${server.base}/wrong-warm.json`],
      { env },
    );
    expect(run.stderr).toContain('sluice: Wrong image: from the image cache');
    expect(run.code).toBe(1);
    expect(resultsOf(run).get(loop.path)).toMatchObject({
      status: 'failed',
      code: 'source-checksum-mismatch',
      message: expect.stringMatching(/but the catalogue says e{64} \(extract_sha256\)/),
    });
    expectBlankHead();
  });

  it('keeps the cache under its limit by evicting the least recently used entry', async () => {
    sh(cache, 'rm -rf images');
    garbage();
    await expectWritten(await flash('Test OS Lite'), server.images.lite);
    garbage();
    await expectWritten(await flash('Test OS Desktop'), server.images.desktop);
    // Room for the two largest, not for three: the least recently used (Lite) goes.
    const sizes = Object.values(server.images)
      .map((i) => i.downloadSize)
      .sort((a, b) => b - a);
    const limit = (sizes[0] ?? 0) + (sizes[1] ?? 0);
    garbage();
    const run = await flash('Test OS Rescue', ['--cache-limit', String(limit)]);
    await expectWritten(run, server.images.rescue);
    expect(run.stderr).toMatch(/sluice: To make room in the cache, removed the least recently used: Test OS Lite\./);
    expect(cached().sort()).toEqual([server.images.desktop.downloadSha256, server.images.rescue.downloadSha256].sort());
  });

  it('writes without keeping a download that would leave less than the reserve free on the cache’s disk', async () => {
    const small = smallTmpfs(64 * MiB);
    garbage();
    const run = await flash('Test OS Lite', [], {
      SLUICE_CACHE_DIR: small,
      SLUICE_CACHE_RESERVE_BYTES: String(60 * MiB),
    });
    await expectWritten(run, server.images.lite);
    expect(run.stderr).toMatch(
      /Test OS Lite is downloaded without being kept in the cache: keeping it would leave less than .* free on the disk that holds the cache/,
    );
    expect(existsSync(join(small, 'images', server.images.lite.downloadSha256))).toBe(false);
  });

  it('flashes a cached entry with the server stopped, from the saved catalogue and the cache: nothing to download', async () => {
    await server.close();
    garbage();
    const run = await flash('Test OS Desktop');
    await expectWritten(run, server.images.desktop);
    expect(run.stderr).toMatch(
      /sluice: offline: showing the copy of .*os_list_v4\.json saved on .* UTC \(Downloading .* failed: the server refused the connection\)\./,
    );
    expect(run.stderr).toMatch(/sluice: Other systems\/Test OS Desktop: from the image cache, nothing to download\./);
    // Not in the cache: the failure says why, and nothing is written.
    const head = garbage();
    const missing = await flash('Test OS Lite');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/Downloading .*lite\.img\.xz failed: the server refused the connection/);
    expect(readBytes(loop.backing, 0, PARTITION_TABLE_BYTES).equals(head)).toBe(true);
  });

  it('a cached download damaged on disk fails the flash with the partition table area blank, and is removed', async () => {
    const file = join(cache, 'images', server.images.desktop.downloadSha256);
    const bytes = readFileSync(file);
    const middle = Math.floor(bytes.length / 2);
    bytes[middle] = (bytes[middle] ?? 0) ^ 0xff;
    writeFileSync(file, bytes);
    garbage();
    const run = await flash('Test OS Desktop');
    expect(resultsOf(run).get(loop.path)).toMatchObject({
      status: 'failed',
      code: expect.stringMatching(/source-checksum-mismatch|source-corrupt/),
    });
    expectBlankHead();
    expect(existsSync(file)).toBe(false);
  });
});
