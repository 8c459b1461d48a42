/**
 * The drive an authorization prompt names is the drive the helper writes (finding 9). The launcher
 * names every drive by its own name before it starts the helper, so a symbolic link turned after
 * that (while the user reads the prompt) changes nothing; the helper refuses any other name.
 */
import { closeSync, openSync, readFileSync, writeFileSync, chmodSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import type { TargetResult } from '../../../common/domain/result.js';
import { MiB } from '../../../common/domain/units.js';
import type { HelperProgram } from '../../../user/launcher/helper-program.js';
import { startHelper } from '../../../user/launcher/launch.js';
import { describeDevices } from '../../support/device-suite.js';
import { raceLink } from '../../support/link-racer.js';
import {
  assertOwnedLoop,
  createLoop,
  digestFile,
  readBytes,
  scratchDir,
  writeRandomFile,
} from '../../support/loop-device.js';
import { builtHelper } from '../../support/unprivileged.js';

const RUNS = 100;
const IMAGE_BYTES = 1 * MiB + 4096;

/** The built helper, started through a shell that first appends its command line to `log`: what a prompt would show. */
function helperLoggingArgv(log: string): HelperProgram {
  const helper = builtHelper();
  return { file: 'sh', args: ['-c', `echo "$@" >> '${log}' && exec "$@"`, 'sh', helper.file, ...helper.args], env: {} };
}

describeDevices('the drive the helper is started for', () => {
  it(`is the disk a link led to when it was named, however the link turns afterwards (${RUNS} runs)`, async () => {
    const dir = scratchDir();
    const a = createLoop({ size: 4 * MiB, dir });
    const b = createLoop({ size: 4 * MiB, dir });
    assertOwnedLoop(a.path);
    assertOwnedLoop(b.path);
    const secret = join(dir, 'secret');
    writeRandomFile(secret, 4 * MiB);
    chmodSync(secret, 0o600);
    const secretBefore = digestFile(secret);
    const log = join(dir, 'argv.log');
    const link = join(dir, 'card');
    const image = join(dir, 'image.img');
    const racer = raceLink(link, [a.path, b.path, secret]);
    const outcomes = { [a.path]: 0, [b.path]: 0, refused: 0 };
    try {
      for (let run = 0; run < RUNS; run++) {
        writeRandomFile(image, IMAGE_BYTES);
        const before = { [a.path]: digestFile(a.backing), [b.path]: digestFile(b.backing) };
        writeFileSync(log, '');
        const fd = openSync(image, 'r');
        let result: TargetResult | undefined;
        try {
          [result] = await startHelper({
            source: fd,
            job: { kind: 'flash', targets: [link], imageSize: IMAGE_BYTES, sourceSeekable: true, verify: true },
            program: helperLoggingArgv(log),
          }).result;
        } finally {
          closeSync(fd);
        }
        const argv = readFileSync(log, 'utf8').trim().split(' ');
        const changed = [a, b].filter((loop) => digestFile(loop.backing) !== before[loop.path]);
        if (result?.status === 'ok') {
          // Written to the disk the helper was started for (its command line ends with it), and
          // to nothing else.
          const [target] = changed;
          expect(changed).toHaveLength(1);
          expect(result.target).toBe(target?.path);
          expect(argv.at(-1)).toBe(target?.path);
          expect(readBytes(target?.backing ?? '', 0, IMAGE_BYTES).equals(readFileSync(image))).toBe(true);
          outcomes[result.target] = (outcomes[result.target] ?? 0) + 1;
        } else {
          // The link led to the file when it was named: no disk name, so the helper refused it.
          expect(result).toMatchObject({ status: 'failed', target: link, code: 'target-not-block-device' });
          expect(argv.at(-1)).toBe(link);
          expect(changed).toEqual([]);
          outcomes.refused += 1;
        }
      }
    } finally {
      await racer.stop();
    }
    console.log(`a helper started for a turning link, ${RUNS} runs:`, outcomes);
    expect(digestFile(secret)).toBe(secretBefore);
    expect(outcomes[a.path]).toBeGreaterThan(0);
    expect(outcomes[b.path]).toBeGreaterThan(0);
    expect(outcomes.refused).toBeGreaterThan(0);
  });
});
