import { describe, expect, it } from 'vitest';
import type { InitFormat } from '../../../common/domain/catalogue.js';
import { builtProbe } from '../../support/built-modules.js';
import { scratchDir } from '../../support/loop-device.js';
import { layoutImage, sh, type BootLayout } from '../../support/os-image.js';

describe('detecting the customisation method from the image itself', async () => {
  const { prepareImage } = await builtProbe();
  const dir = scratchDir();
  const images = new Map<BootLayout, string>();
  for (const layout of ['pi-os', 'ubuntu', 'none', 'pi-os-preseed'] as const)
    images.set(layout, layoutImage(dir, layout));
  sh(dir, 'for f in pi-os ubuntu none; do xz -T2 -k -1 $f.img; zip -q -1 $f.img.zip $f.img; done');

  const expected: [BootLayout, string | null, RegExp][] = [
    [
      'pi-os',
      'systemd-firstrun',
      /cmdline\.txt and config\.txt .*imager_custom.*firstrun\.sh runs from the boot partition, mounted at \/boot\/firmware or \/boot/,
    ],
    ['ubuntu', 'cloud-init', /cloud-init seed files \(user-data, meta-data, network-config\)/],
    ['none', null, /has none of what Sluice looks for \(looked for cmdline\.txt and config\.txt/],
    ['pi-os-preseed', 'rpi-preseed', /rpi-preseed\.service/],
  ];

  it.each(expected)('%s, raw: %s', async (layout, method, why) => {
    const { info } = await prepareImage({ image: images.get(layout) ?? '' });
    expect(info.customisation).toBe(method);
    expect(info.customisationNote).toMatch(why);
  });

  it.each(expected.slice(0, 3))(
    '%s, .xz and .zip (read through the decoder, boot partition only): %s',
    async (layout, method) => {
      for (const suffix of ['.xz', '.zip']) {
        const { info } = await prepareImage({ image: `${images.get(layout) ?? ''}${suffix}` });
        expect(info.customisation).toBe(method);
        if (layout === 'pi-os')
          expect(info.customisationNote).toMatch(
            /The root filesystem was not read.*firstrun\.sh runs from the boot partition, mounted at \/boot\/firmware or \/boot/,
          );
      }
    },
  );

  it('an image that is not a disk says why, and a flash that needs no partition table does not look', async () => {
    const { info } = await prepareImage({ image: `${images.get('pi-os') ?? ''}.xz`, partitions: false });
    expect(info.customisation).toBeNull();
    expect(info.customisationNote).toBeNull();
  });

  describe("with a catalogue entry's init_format", () => {
    const detected = async (image: string, initFormat: InitFormat) => {
      const { info } = await prepareImage({ image, initFormat });
      return { method: info.customisation, why: info.customisationNote };
    };

    it('chooses the method where the contents cannot tell (a Pi OS boot partition read through a decoder, root not read)', async () => {
      const xz = `${images.get('pi-os') ?? ''}.xz`;
      expect(await detected(xz, 'systemd')).toEqual({
        method: 'systemd-firstrun',
        why: expect.stringMatching(
          /firstrun\.sh runs from the boot partition, mounted at \/boot\/firmware or \/boot\. The catalogue entry says the same \(init_format "systemd"\)\.$/,
        ),
      });
      for (const format of ['cloudinit', 'cloudinit-rpi'] as const) {
        expect(await detected(xz, format)).toEqual({
          method: 'cloud-init',
          why: `The catalogue entry chooses cloud-init (init_format "${format}"): the boot partition (partition 1) has cmdline.txt and config.txt, which do not tell the methods apart, and the root filesystem was not read: it is not reachable without decoding the whole image. The seed files go on the boot partition and cmdline.txt names them (ds=nocloud).`,
        });
      }
      expect(await detected(xz, 'rpi-preseed')).toMatchObject({
        method: 'rpi-preseed',
        why: expect.stringMatching(
          /^The catalogue entry chooses rpi-preseed .* rpi-preseed\.toml goes on the boot partition\.$/,
        ),
      });
      expect(await detected(xz, 'none')).toMatchObject({
        method: null,
        why: expect.stringMatching(/^The catalogue entry chooses no customisation \(init_format "none"\): /),
      });
    });

    it('lets the contents win where they can tell, and says so', async () => {
      // Raw: the root filesystem is read, and has imager_custom.
      expect(await detected(images.get('pi-os') ?? '', 'cloudinit')).toEqual({
        method: 'systemd-firstrun',
        why: expect.stringMatching(
          /imager_custom.*\. The catalogue entry names cloud-init \(init_format "cloudinit"\), but the image's own contents win\.$/,
        ),
      });
      expect(await detected(images.get('pi-os') ?? '', 'none')).toMatchObject({
        method: 'systemd-firstrun',
        why: expect.stringMatching(
          /The catalogue entry names no customisation \(init_format "none"\), but the image's own contents win\.$/,
        ),
      });
      // Seed files on the boot partition tell, even through a decoder.
      expect(await detected(`${images.get('ubuntu') ?? ''}.xz`, 'systemd')).toMatchObject({
        method: 'cloud-init',
        why: expect.stringMatching(/seed files .*but the image's own contents win\.$/),
      });
      expect(await detected(`${images.get('none') ?? ''}.xz`, 'systemd')).toMatchObject({
        method: null,
        why: expect.stringMatching(
          /has none of what Sluice looks for .*The catalogue entry names systemd-firstrun \(init_format "systemd"\), but the image's own contents win\.$/,
        ),
      });
    });
  });
});
