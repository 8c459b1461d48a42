import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MiB } from '../../../common/domain/units.js';
import { dmgSize, openDmg } from '../../../user/images/formats/dmg.js';
import { readBlkx } from '../../../user/images/formats/udif-plist.js';
import { dmgWithMalformedPlist } from '../../support/hostile-images.js';
import { writeDmg } from '../../support/udif.js';

const dir = mkdtempSync(join(tmpdir(), 'sluice-unit-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function open(name: string) {
  const path = join(dir, name);
  return openDmg(path, statSync(path).size, name);
}

describe('dmg property lists: one malformed list fails its own probe only', () => {
  it('a good dmg opens after a malformed one, in the same process (@balena/udif’s shared parser refused every later list)', async () => {
    const disk = Buffer.alloc(4 * MiB);
    disk.fill(7, MiB, 3 * MiB);
    writeDmg(disk, join(dir, 'good.dmg'));
    dmgWithMalformedPlist(join(dir, 'good.dmg'), join(dir, 'bad.dmg'));
    for (let round = 0; round < 2; round++) {
      await expect(open('bad.dmg')).rejects.toThrow(
        /bad\.dmg is not a readable dmg \(UDIF\) image: its property list is not well-formed XML \(line \d+: Expected closing tag 'array'/,
      );
      expect(await dmgSize(await open('good.dmg'))).toBe(4 * MiB);
    }
  });
});

describe('readBlkx: only the block tables, from a well-formed list', () => {
  const plist = (body: string) => `<?xml version="1.0" encoding="UTF-8"?>\n<plist version="1.0">\n${body}\n</plist>`;

  it('reads each blkx entry’s fields and its Data', () => {
    const entries = readBlkx(
      plist(
        '<dict><key>resource-fork</key><dict><key>blkx</key><array><dict><key>Attributes</key><string>0x0050</string><key>Data</key><data>bWlzaA==</data><key>ID</key><string>-1</string><key>Name</key><string>disk</string></dict></array></dict></dict>',
      ),
    );
    expect(entries).toEqual([
      { id: -1, attributes: 0x50, name: 'disk', coreFoundationName: '', data: Buffer.from('mish') },
    ]);
  });

  it('says what is missing or malformed', () => {
    expect(readBlkx(plist('<dict><key>resource-fork</key><dict></dict></dict>'))).toEqual([]);
    expect(() => readBlkx(plist('<dict></dict>'))).toThrow(/its resource-fork is not a dictionary/);
    expect(() => readBlkx(plist('<dict><key>resource-fork</key></dict>'))).toThrow(
      /its property list has a key without a value/,
    );
    expect(() =>
      readBlkx(
        plist(
          '<dict><key>resource-fork</key><dict><key>blkx</key><array><dict><key>ID</key><string>1</string></dict></array></dict></dict>',
        ),
      ),
    ).toThrow(/its blkx entry 0 has no Data/);
    expect(() => readBlkx('<plist><dict>'.repeat(200))).toThrow(/not well-formed XML \(Maximum nested tags exceeded\)/);
  });
});
