import { join } from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { GiB, MiB } from '../../common/domain/units.js';
import { flashCli, resultsOf } from '../support/cli.js';
import { describeDevices } from '../support/device-suite.js';
import { FAKE_CLAIMED, FAKE_REAL, fakeCard, type FakeBehaviour } from '../support/fake-card.js';
import { createLoop, scratchDir, writeRandomFile } from '../support/loop-device.js';

/** The acceptance image: 128 MiB of random bytes. */
const IMAGE_BYTES = 128 * MiB;

describeDevices('the capacity check of every flash', () => {
  let image = '';
  beforeAll(() => {
    image = join(scratchDir(), 'image.img');
    writeRandomFile(image, IMAGE_BYTES);
  });

  const fakes: { name: string; behaviour: FakeBehaviour; kind: string }[] = [
    { name: 'limbo (writes past 256 MiB dropped)', behaviour: { kind: 'limbo', real: FAKE_REAL }, kind: 'limbo' },
    { name: 'wrap-around at 256 MiB', behaviour: { kind: 'wrap', real: FAKE_REAL }, kind: 'wrap-around' },
    { name: 'I/O errors past 256 MiB', behaviour: { kind: 'bad', from: FAKE_REAL, to: FAKE_CLAIMED }, kind: 'errors' },
  ];
  for (const fake of fakes) {
    it(`fails a flash onto a 4 GiB fake that is ${fake.name}, naming the kind and the real capacity within 10%`, async () => {
      const card = await fakeCard(FAKE_CLAIMED, fake.behaviour);
      const run = await flashCli(image, [card.path], ['--no-eject']);
      expect(run.code).toBe(1);
      const result = run.events.find((e) => e.type === 'result');
      expect(result).toMatchObject({
        status: 'failed',
        code: 'target-fake-capacity',
        fakeCapacity: { kind: fake.kind, claimedBytes: FAKE_CLAIMED },
      });
      const real = (result?.['fakeCapacity'] as { realBytes: number }).realBytes;
      expect(Math.abs(real - FAKE_REAL) / FAKE_REAL).toBeLessThanOrEqual(0.1);
      expect(String(result?.['message'])).toMatch(/not the size it claims.*4\.3 GB.*about 2[5-9]\d MB/);
      // The image itself is on the drive, verified: the advice is to stop using the drive, not to flash it again.
      expect(String(result?.['message'])).not.toContain('flash it again');
    });
  }

  it('passes on an honest 4 GiB drive, with the check’s cost in the result', async () => {
    const loop = createLoop({ size: 4 * GiB, fill: 'sparse' });
    const run = await flashCli(image, [loop.path], ['--no-eject']);
    expect(run.code).toBe(0);
    const result = resultsOf(run).get(loop.path) as unknown as {
      status: string;
      capacityCheck: { markers: number; seconds: number };
      seconds: number;
    };
    expect(result.status).toBe('ok');
    expect(result.capacityCheck.markers).toBeGreaterThan(50);
    expect(result.capacityCheck.seconds).toBeLessThan(result.seconds);
  });

  it('a fake too small for the image says the image on it did not verify, and that the drive is incomplete', async () => {
    const big = join(scratchDir(), 'big.img');
    writeRandomFile(big, FAKE_REAL + 32 * MiB);
    const card = await fakeCard(FAKE_CLAIMED, { kind: 'limbo', real: FAKE_REAL });
    const run = await flashCli(big, [card.path], ['--no-eject']);
    expect(run.code).toBe(1);
    const result = run.events.find((e) => e.type === 'result');
    expect(result).toMatchObject({ status: 'failed', code: 'target-fake-capacity' });
    expect(String(result?.['message'])).toMatch(
      /did not verify either\. The drive is incomplete; flash it again before use\.$/,
    );
  });

  it('--no-capacity-check leaves the markers out: the same limbo fake then passes (its image fits)', async () => {
    const card = await fakeCard(FAKE_CLAIMED, { kind: 'limbo', real: FAKE_REAL });
    const run = await flashCli(image, [card.path], ['--no-eject', '--no-capacity-check']);
    expect(run.code).toBe(0);
    expect(resultsOf(run).get(card.path)).not.toHaveProperty('capacityCheck');
  });
});
