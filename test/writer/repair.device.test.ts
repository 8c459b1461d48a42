import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { KiB, MiB } from '../../common/domain/units.js';
import { assertTestTarget, collect, flashCli, resultsOf, spawnCli } from '../support/cli.js';
import { describeDevices } from '../support/device-suite.js';
import { fakeCard } from '../support/fake-card.js';
import { readBytes, scratchDir, writeRandomFile } from '../support/loop-device.js';

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
    expect(resultsOf(run).get(card.path)).toMatchObject({ status: 'ok', verified: true, repaired: { blocks: 1, offsets: [50 * MiB] } });
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

  it('a compressed image (a stream, not read again) keeps the mismatch and says why it was not repaired', async () => {
    const packed = `${image}.gz`;
    execFileSync('sh', ['-c', `gzip -1 -c '${image}' > '${packed}'`]);
    const card = await fakeCard(256 * MiB, { kind: 'flaky', at: FLAKY_AT, always: false });
    const run = await flashCli(packed, [card.path], ['--no-eject']);
    expect(run.code).toBe(1);
    const result = resultsOf(run).get(card.path);
    expect(result).toMatchObject({ status: 'failed', code: 'verify-mismatch', badBlocks: 1 });
    expect(result?.message).toContain('could not be rewritten: the image reached the writer as a stream');
  });
});
