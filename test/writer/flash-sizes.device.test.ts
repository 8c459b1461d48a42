import { copyFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { MiB } from '../../common/domain/units.js';
import { describeDevices } from '../support/device-suite.js';
import { flashFile } from '../support/engine.js';
import { createLoop, scratchDir, writeRandomFile } from '../support/loop-device.js';
import { withoutMarkers } from '../support/markers.js';

const DEVICE_BYTES = 80 * MiB;

describeDevices('flashing images of awkward sizes to a real loop device', () => {
  // Sizes around every boundary the writer has: sector (512), page (4096), the head (1 MiB), the chunk.
  it.each([0, 1, 511, 512, 4095, 1 * MiB + 1, 64 * MiB])(
    '%i bytes: the device holds the image, and nothing past it changed but the capacity markers',
    async (size) => {
      const dir = scratchDir();
      const image = join(dir, 'image.img');
      writeRandomFile(image, size);
      const loop = createLoop({ size: DEVICE_BYTES, dir });
      const before = join(dir, 'before.img');
      copyFileSync(loop.backing, before);

      const [result] = await flashFile(image, [loop.path]);

      expect(result).toMatchObject({ status: 'ok', bytes: size, written: true, verified: true });
      const device = readFileSync(loop.backing);
      const original = readFileSync(before);
      expect(device.subarray(0, size).equals(readFileSync(image))).toBe(true);
      expect(
        withoutMarkers(device.subarray(size), size, DEVICE_BYTES, size).equals(
          withoutMarkers(original.subarray(size), size, DEVICE_BYTES, size),
        ),
      ).toBe(true);
      expect(result).toHaveProperty('capacityCheck');
    },
  );
});
