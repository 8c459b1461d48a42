import { describe, expect, it } from 'vitest';
import { builtProbe } from '../../support/built-modules.js';
import { scratchDir } from '../../support/loop-device.js';
import { layoutImage, sh, type BootLayout } from '../../support/os-image.js';

describe('detecting the customisation method from the image itself', async () => {
  const { prepareImage } = await builtProbe();
  const dir = scratchDir();
  const images = new Map<BootLayout, string>();
  for (const layout of ['pi-os', 'ubuntu', 'none', 'pi-os-preseed'] as const) images.set(layout, layoutImage(dir, layout));
  sh(dir, 'for f in pi-os ubuntu none; do xz -T2 -k -1 $f.img; zip -q -1 $f.img.zip $f.img; done');

  const expected: [BootLayout, string | null, RegExp][] = [
    ['pi-os', 'systemd-firstrun', /cmdline\.txt and config\.txt .*imager_custom.*firstrun\.sh runs from \/boot\/firmware/],
    ['ubuntu', 'cloud-init', /cloud-init seed files \(user-data, meta-data, network-config\)/],
    ['none', null, /has none of what Sluice looks for \(looked for cmdline\.txt and config\.txt/],
    ['pi-os-preseed', 'rpi-preseed', /rpi-preseed\.service/],
  ];

  it.each(expected)('%s, raw: %s', async (layout, method, why) => {
    const { info } = await prepareImage({ image: images.get(layout) ?? '' });
    expect(info.customisation).toBe(method);
    expect(info.customisationNote).toMatch(why);
  });

  it.each(expected.slice(0, 3))('%s, .xz and .zip (read through the decoder, boot partition only): %s', async (layout, method) => {
    for (const suffix of ['.xz', '.zip']) {
      const { info } = await prepareImage({ image: `${images.get(layout) ?? ''}${suffix}` });
      expect(info.customisation).toBe(method);
      if (layout === 'pi-os') expect(info.customisationNote).toMatch(/The root filesystem was not read.*firstrun\.sh runs from \/boot\/firmware/);
    }
  });

  it('an image that is not a disk says why, and a flash that needs no partition table does not look', async () => {
    const { info } = await prepareImage({ image: `${images.get('pi-os') ?? ''}.xz`, partitions: false });
    expect(info.customisation).toBeNull();
    expect(info.customisationNote).toBeNull();
  });
});
