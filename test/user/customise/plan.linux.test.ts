/**
 * The customisation plan from a compressed image is the plan from the raw one, on a boot
 * partition of 512-byte clusters whose cmdline.txt and config.txt each span several clusters; a
 * cmdline.txt that does not read as a command line is refused, not rewritten.
 */
import { describe, expect, it } from 'vitest';
import { builtProbe } from '../../support/built-modules.js';
import { fullCustomisation } from '../../support/customisation.js';
import { scratchDir } from '../../support/loop-device.js';
import { layoutImage, LONG_PI_CMDLINE, LONG_PI_CONFIG, sh } from '../../support/os-image.js';

describe('planning a customisation', async () => {
  const { prepareImage } = await builtProbe();
  const dir = scratchDir();
  const long = layoutImage(dir, 'pi-os', {
    name: 'long.img',
    files: { 'cmdline.txt': LONG_PI_CMDLINE, 'config.txt': LONG_PI_CONFIG },
  });
  const nul = layoutImage(dir, 'pi-os', { name: 'nul.img', files: { 'cmdline.txt': '\0'.repeat(1029) } });
  sh(dir, 'for f in long nul; do xz -k -1 $f.img; zstd -q -1 $f.img; gzip -k -1 $f.img; done');
  const cards = [fullCustomisation([]), fullCustomisation([], { hostname: 'pi-8' })];

  it('gives the same bytes from .xz, .zst and .gz as from the raw image, for files over one cluster', async () => {
    expect(LONG_PI_CMDLINE.length).toBeGreaterThan(1024);
    expect(LONG_PI_CONFIG.indexOf('/boot/firmware/')).toBeGreaterThan(512);
    const raw = await prepareImage({ image: long, customise: cards });
    expect(raw.customisation?.overlays).toHaveLength(2);
    for (const suffix of ['.xz', '.zst', '.gz']) {
      const compressed = await prepareImage({ image: `${long}${suffix}`, customise: cards });
      expect(compressed.customisation?.overlays, suffix).toEqual(raw.customisation?.overlays);
      expect(compressed.info.customisationNote, suffix).toMatch(
        /firstrun\.sh runs from the boot partition, mounted at \/boot\/firmware or \/boot/,
      );
    }
  });

  it('refuses a cmdline.txt that does not read as a command line, from any format', async () => {
    for (const suffix of ['', '.xz', '.zst', '.gz']) {
      const error = await prepareImage({ image: `${nul}${suffix}`, customise: cards }).then(
        () => null,
        (e: unknown) => e,
      );
      // The built probe's JobError: its class is not this module's.
      expect(error, suffix).toMatchObject({ failure: { code: 'cannot-customise' } });
      expect((error as Error).message).toMatch(
        /cmdline\.txt on the boot partition does not read as a kernel command line: it holds a control character \(0x00\) at byte 0\. .*Nothing was written\./,
      );
    }
  });
});
