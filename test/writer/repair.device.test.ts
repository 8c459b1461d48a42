import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { KiB, MiB } from '../../common/domain/units.js';
import type { Extent } from '../../common/domain/extents.js';
import { EXIT } from '../../cli/exit-codes.js';
import { resultLine } from '../../cli/render.js';
import { DRIVE_INCOMPLETE, type TargetResult } from '../../common/domain/result.js';
import { assertTestTarget, cloneCli, collect, flashCli, resultsOf, spawnCli, waitForEvent } from '../support/cli.js';
import { serve, writePaced } from '../support/file-server.js';
import { differencesOutside, fsckPartitions, imageFreeSpace } from '../support/free-space.js';
import { osImage, osImageLayout, sh } from '../support/os-image.js';
import { describeDevices } from '../support/device-suite.js';
import { fakeCard } from '../support/fake-card.js';
import { createLoop, readBytes, scratchDir, writeRandomFile } from '../support/loop-device.js';

const IMAGE_BYTES = 128 * MiB;
/** The flaky card's bad 4 KiB block; fake-card.py flips byte 17 of it. */
const FLAKY_AT = 50 * MiB + 8 * KiB;

describeDevices('repair of blocks that read back wrong', () => {
  let image = '';
  beforeAll(() => {
    image = join(scratchDir(), 'image.img');
    writeRandomFile(image, IMAGE_BYTES);
  });

  it('a card that corrupts one block once: the flash ends green with "repaired 1 block", and the card holds the image', async () => {
    const card = await fakeCard(256 * MiB, { kind: 'flaky', at: FLAKY_AT, always: false });
    assertTestTarget(card.path);
    const run = await collect(spawnCli(['flash', '--yes', '--no-eject', image, card.path]));
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(`${card.path}: written and verified`);
    expect(run.stdout).toContain(`repaired 1 block at offset ${50 * MiB}`);
    const grain = 50 * MiB;
    expect(readBytes(card.backing, grain, MiB).equals(readBytes(image, grain, MiB))).toBe(true);
  });

  it('--json carries the repair on the ok result', async () => {
    const card = await fakeCard(256 * MiB, { kind: 'flaky', at: FLAKY_AT, always: false });
    const run = await flashCli(image, [card.path], ['--no-eject']);
    expect(run.code).toBe(0);
    expect(resultsOf(run).get(card.path)).toMatchObject({
      status: 'ok',
      verified: true,
      repaired: { blocks: 1, offsets: [50 * MiB] },
    });
  });

  it('a card that corrupts the block every time: red, naming the failing byte', async () => {
    const card = await fakeCard(256 * MiB, { kind: 'flaky', at: FLAKY_AT, always: true });
    const run = await flashCli(image, [card.path], ['--no-eject']);
    expect(run.code).toBe(1);
    const result = resultsOf(run).get(card.path);
    expect(result).toMatchObject({ status: 'failed', code: 'verify-mismatch', offset: FLAKY_AT + 17, badBlocks: 1 });
    expect(result?.message).toContain(`The card keeps corrupting the block at byte offset ${FLAKY_AT + 17}`);
    expect(result?.message).toContain('It is failing; use another card.');
  });
});

describeDevices('repair of a clone: the blocks are read again from the source drive', () => {
  it('a clone onto a card that corrupts one block once: green, "repaired 1 block", and the card holds the source', async () => {
    const source = createLoop({ size: 64 * MiB });
    const card = await fakeCard(256 * MiB, { kind: 'flaky', at: FLAKY_AT, always: false });
    const run = await cloneCli(source.path, card.path, ['--no-eject']);
    expect(run.code, run.stderr).toBe(0);
    expect(resultsOf(run).get(card.path)).toMatchObject({
      status: 'ok',
      verified: true,
      repaired: { blocks: 1, offsets: [50 * MiB] },
    });
    expect(readBytes(card.backing, 0, 64 * MiB).equals(readFileSync(source.backing))).toBe(true);
  });
});

/** The first 64 MiB of random bytes (xz takes 6 s on it here; the flaky block lies inside), as a raw image and as .xz. */
const STREAM_BYTES = 64 * MiB;

describeDevices('repair of a stream: the app decodes the image again for the blocks asked for', () => {
  let plain = '';
  let packed = '';
  beforeAll(() => {
    const dir = scratchDir();
    plain = join(dir, 'stream.img');
    writeRandomFile(plain, STREAM_BYTES);
    packed = `${plain}.xz`;
    sh(dir, `xz -0 -T2 -c stream.img > stream.img.xz`);
  });

  it('an .xz image onto a card that corrupts one block once: green, "repaired 1 block", and the card holds the image', async () => {
    const card = await fakeCard(256 * MiB, { kind: 'flaky', at: FLAKY_AT, always: false });
    assertTestTarget(card.path);
    const run = await collect(spawnCli(['flash', '--yes', '--no-eject', packed, card.path]));
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(`${card.path}: written and verified`);
    expect(run.stdout).toContain(`repaired 1 block at offset ${50 * MiB}`);
    expect(readBytes(card.backing, 0, STREAM_BYTES).equals(readFileSync(plain))).toBe(true);
  });

  it('an .xz image onto two such cards at once: each asks in turn, and both end green holding the image', async () => {
    const cards = [
      await fakeCard(256 * MiB, { kind: 'flaky', at: FLAKY_AT, always: false }),
      await fakeCard(256 * MiB, { kind: 'flaky', at: 20 * MiB, always: false }),
    ];
    const run = await flashCli(
      packed,
      cards.map((c) => c.path),
      ['--no-eject'],
    );
    expect(run.code, run.stderr).toBe(0);
    expect(resultsOf(run).get(cards[0]?.path ?? '')).toMatchObject({
      status: 'ok',
      repaired: { blocks: 1, offsets: [50 * MiB] },
    });
    expect(resultsOf(run).get(cards[1]?.path ?? '')).toMatchObject({
      status: 'ok',
      repaired: { blocks: 1, offsets: [20 * MiB] },
    });
    const want = readFileSync(plain);
    for (const card of cards) expect(readBytes(card.backing, 0, STREAM_BYTES).equals(want)).toBe(true);
  });

  it('an .xz image onto a card that corrupts the block every time: red, naming the failing byte', async () => {
    const card = await fakeCard(256 * MiB, { kind: 'flaky', at: FLAKY_AT, always: true });
    const run = await flashCli(packed, [card.path], ['--no-eject']);
    expect(run.code).toBe(1);
    const result = resultsOf(run).get(card.path);
    // Each rewrite is compared byte for byte with the image's bytes the app sent again, so a stream's failing byte is exact too.
    expect(result).toMatchObject({ status: 'failed', code: 'verify-mismatch', offset: FLAKY_AT + 17, badBlocks: 1 });
    expect(result?.message).toContain(`The card keeps corrupting the block at byte offset ${FLAKY_AT + 17}`);
    expect(result?.message).toContain('It is failing; use another card.');
  });

  it('cancelled while the image is downloaded again for a repair: cancelled, and the drive is said to be incomplete', async () => {
    const body = readFileSync(plain);
    let again = false;
    let second: () => void = () => undefined;
    const asked = new Promise<void>((resolve) => (second = resolve));
    // The first download goes at full speed; once the card is being verified, a download (the repair's) crawls.
    let verifying = false;
    const server = await serve((request, response) => {
      response.writeHead(200, { 'Content-Length': body.length, 'Content-Type': 'application/octet-stream' });
      if (!verifying) return void response.end(body);
      again = true;
      second();
      writePaced(response, body, 0, body.length, 2 * MiB, () => response.end());
    });
    try {
      const card = await fakeCard(256 * MiB, { kind: 'flaky', at: FLAKY_AT, always: false });
      assertTestTarget(card.path);
      const child = spawnCli(['flash', '--yes', '--no-eject', '--json', `${server.base}/stream.img`, card.path]);
      const done = collect(child);
      await waitForEvent(child, (e) => e.type === 'progress' && e['phase'] === 'verifying');
      verifying = true;
      await asked;
      // The helper relays how far the decoder got: the download that would take 25 s to reach the block is under way.
      await waitForEvent(child, (e) => e.type === 'progress' && e['phase'] === 'repairing');
      const cancelled = performance.now();
      child.kill('SIGINT');
      const run = await done;
      // It stops the decoder, not the 20 s left of the download.
      expect(performance.now() - cancelled).toBeLessThan(8000);
      expect(again).toBe(true);
      expect(run.code).toBe(EXIT.cancelled);
      const result = resultsOf(run).get(card.path) as TargetResult | undefined;
      expect(result).toMatchObject({ status: 'cancelled' });
      // What the CLI says of it without --json.
      expect(result === undefined ? '' : resultLine(result)).toBe(`${card.path}: cancelled. ${DRIVE_INCOMPLETE}`);
    } finally {
      await server.close();
    }
  });
});

describeDevices('repair where free space was left out: only the written ranges are rewritten and compared', () => {
  const SIZE = 64 * MiB;
  let dir = '';
  let image = '';
  let free: Extent[] = [];
  /** A 4 KiB block the card must hold: the ext4 superblock's, past the FAT boot partition's free space left out before it. */
  let flakyAt = 0;
  beforeAll(async () => {
    dir = scratchDir();
    image = osImage(dir, SIZE, 'os.img', { fat32: true });
    sh(dir, 'xz -T2 -c os.img > os.img.xz');
    free = await imageFreeSpace(image, dir);
    flakyAt = osImageLayout(SIZE, { fat32: true }).root[0];
    expect(free.some(([offset]) => offset < flakyAt)).toBe(true);
    expect(free.some(([offset, length]) => flakyAt >= offset && flakyAt < offset + length)).toBe(false);
  });

  for (const [title, name] of [
    ['read in place', 'os.img'],
    ['as .xz, its free space found as it streams', 'os.img.xz'],
  ] as const) {
    it(`the OS-like image ${title}, onto a card that corrupts one block once: green, repaired, and the card holds the image`, async () => {
      const card = await fakeCard(256 * MiB, { kind: 'flaky', at: flakyAt, always: false });
      const run = await flashCli(join(dir, name), [card.path], ['--no-eject']);
      expect(run.code, run.stderr).toBe(0);
      const result = resultsOf(run).get(card.path) as
        { status: string; skipped?: number; repaired?: { blocks: number; offsets: number[] } } | undefined;
      expect(result?.status).toBe('ok');
      expect(result?.skipped).toBeGreaterThan(0);
      expect(result?.repaired?.blocks).toBe(1);
      expect(result?.repaired?.offsets[0]).toBeLessThanOrEqual(flakyAt);
      expect(differencesOutside(readBytes(card.backing, 0, SIZE), readFileSync(image), free)).toEqual([]);
      fsckPartitions(card.backing, image, dir);
    });
  }
});
