import { describe, expect, it } from 'vitest';
import { collect, spawnCli } from '../../support/cli.js';
import { discFixture } from '../../support/iso-fixtures.js';
import { scratchDir } from '../../support/loop-device.js';

async function info(image: string, json: boolean): Promise<string> {
  const run = await collect(spawnCli(['info', ...(json ? ['--json'] : []), image]));
  expect(run.code, run.stderr).toBe(0);
  return run.stdout;
}

describe('sluice info: what an ISO does once written to a stick', () => {
  it.each([
    [
      'hybrid',
      { kind: 'hybrid', filesystem: 'iso9660', efiLoaders: ['/EFI/BOOT/BOOTX64.EFI'] },
      /boots from:\s+a stick or a DVD: a hybrid ISO/,
    ],
    [
      'non-hybrid',
      { kind: 'non-hybrid', filesystem: 'iso9660', elTorito: true, efiLoaders: ['/EFI/BOOT/BOOTX64.EFI'] },
      /boots from:\s+a DVD only: an ISO without a partition table \(El Torito \(DVD boot\), \/EFI\/BOOT\/BOOTX64.EFI\)/,
    ],
    [
      'windows',
      { kind: 'windows', filesystem: 'udf', elTorito: false, efiLoaders: ['/EFI/BOOT/bootx64.efi'] },
      /boots from:\s+a DVD only: a Windows installer ISO \(UDF\)/,
    ],
    [
      'not-bootable',
      { kind: 'not-bootable', filesystem: 'iso9660', elTorito: false, efiLoaders: [] },
      /boots from:\s+nothing: an ISO with no boot record/,
    ],
  ] as const)('%s', async (kind, disc, said) => {
    const iso = discFixture(scratchDir(), kind);
    const probed = JSON.parse(await info(iso, true)) as { disc: unknown; partitionTable: { type: string } };
    expect(probed.disc).toEqual({ elTorito: expect.any(Boolean) as unknown, problem: null, ...disc });
    expect(probed.partitionTable.type).toBe(kind === 'hybrid' ? 'mbr' : 'none');
    expect(await info(iso, false)).toMatch(said);
  });

  it('an image that is no ISO has no "disc" and no "boots from" line', async () => {
    const dir = scratchDir();
    const { writeFileSync } = await import('node:fs');
    writeFileSync(`${dir}/blank.img`, Buffer.alloc(1 << 20, 1));
    expect(JSON.parse(await info(`${dir}/blank.img`, true))).toMatchObject({ disc: null });
    expect(await info(`${dir}/blank.img`, false)).not.toMatch(/boots from/);
  });
});
