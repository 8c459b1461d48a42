/** A decoder part that cannot be loaded is a damaged installation, never the image's fault. */
import { expect, it } from 'vitest';
import { loadPart } from '../../../../user/images/decode/load-part.js';
import { JobError } from '../../../../common/domain/failure.js';

it('names a part that cannot be loaded as an internal failure, with the reason', async () => {
  const failed = await loadPart(
    'dmg decoder',
    () => import('../../../../user/images/decode/no-such-module.js' as string),
  ).catch((error: unknown) => error);
  expect(failed).toBeInstanceOf(JobError);
  expect(failed).toMatchObject({ failure: { code: 'internal' } });
  expect((failed as JobError).message).toMatch(
    /^Sluice's dmg decoder could not be loaded \(.*no-such-module.*\); its installation is damaged\. Please reinstall Sluice\.$/,
  );
});

it('hands over the part when it loads', async () => {
  const part = await loadPart('zlib decoders', () => import('../../../../user/images/decode/in-process.js'));
  expect(typeof part.gunzip).toBe('function');
});
