import { execFileSync } from 'node:child_process';
import { truncateSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MiB } from '../../../common/domain/units.js';
import { ChosenImage } from '../../../electron/core/chosen-image.js';
import { JobRunner } from '../../../electron/core/job-runner.js';
import { builtImageProbe } from '../../support/built-modules.js';

const { probeImage } = await builtImageProbe();

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sluice-chosen-'));
});
afterEach(async () => rm(dir, { recursive: true, force: true }));

/** An 8 MiB image whose second partition runs to its end, cut to `size` bytes. */
function image(size: number): string {
  const path = join(dir, 'os.img');
  writeFileSync(path, '');
  truncateSync(path, 8 * MiB);
  execFileSync('sfdisk', ['--quiet', path], {
    input: 'label: dos\nstart=2048, size=4096, type=c\nstart=6144, type=83\n',
  });
  truncateSync(path, size);
  return path;
}

describe('choosing an image in the app', () => {
  it('refuses an image cut short, saying which partition reaches past its end, and keeps the image chosen before', async () => {
    let changes = 0;
    const chosen = new ChosenImage(new JobRunner(() => undefined), () => (changes += 1));
    const whole = image(8 * MiB);
    expect(await chosen.choose(whole, probeImage)).toMatchObject({ ok: true });
    expect(changes).toBe(1);

    const cut = join(dir, 'cut.img');
    execFileSync('cp', [whole, cut]);
    truncateSync(cut, 5 * MiB);
    const answer = await chosen.choose(cut, probeImage);
    expect(answer).toEqual({
      ok: false,
      error: {
        code: 'source-truncated',
        offset: 5 * MiB,
        message: `cut.img is cut short: it ends at 5.2 MB (${5 * MiB} bytes), but its partition 2 reaches to 8.4 MB (${8 * MiB} bytes). Written to a drive, that partition would be broken. Download or copy the image again.`,
      },
    });
    // Nothing changed: the drives are still judged against the whole image, which a flash would write.
    expect(changes).toBe(1);
    expect(chosen.current?.info.source).toBe(whole);
  });
});
