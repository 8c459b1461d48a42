import { expect, it } from 'vitest';
import { MiB } from '../../common/domain/units.js';
import { assertTestTarget, collect, flashCli, resultsOf, spawnCli } from '../support/cli.js';
import { describeDevices } from '../support/device-suite.js';
import { discFixture } from '../support/iso-fixtures.js';
import { createLoop, digestFile, scratchDir } from '../support/loop-device.js';

describeDevices('an ISO that will not boot from a stick is not written silently', () => {
  it.each(['non-hybrid', 'windows', 'not-bootable'] as const)(
    '%s: the default flash refuses, says why and what to do, and writes nothing',
    async (kind) => {
      const iso = discFixture(scratchDir(), kind);
      const loop = createLoop({ size: 8 * MiB });
      const before = digestFile(loop.backing);
      assertTestTarget(loop.path);
      const run = await collect(spawnCli(['flash', iso, loop.path]));
      expect(run.code, run.stderr).toBe(1);
      expect(run.stderr).toMatch(
        kind === 'not-bootable'
          ? /no partition table and no boot code: a stick written from it boots nothing/
          : /written byte for byte, the stick boots nothing/,
      );
      expect(run.stderr).toMatch(
        kind === 'not-bootable'
          ? /To write it as it is anyway .* pass --yes\. Nothing was written\.$/m
          : /pass --iso-mode files; to write it as it is anyway .* pass --yes\. Nothing was written\.$/m,
      );
      expect(digestFile(loop.backing)).toBe(before);
    },
  );

  it('with --yes it is written as it is, after a warning line, and verified', async () => {
    const iso = discFixture(scratchDir(), 'non-hybrid');
    const loop = createLoop({ size: 8 * MiB });
    const run = await flashCli(iso, [loop.path]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/warning: .*the stick boots nothing\. Writing it as it is \(--yes\)\./);
    expect(resultsOf(run).get(loop.path)).toMatchObject({ status: 'ok' });
  });

  it('a hybrid ISO is written with no warning', async () => {
    const iso = discFixture(scratchDir(), 'hybrid');
    const loop = createLoop({ size: 8 * MiB });
    const run = await flashCli(iso, [loop.path]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).not.toMatch(/boots nothing/);
  });
});
