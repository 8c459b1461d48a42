import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { slotOf } from '../../../user/station/identity.js';

const dir = mkdtempSync(join(tmpdir(), 'sluice-slots-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('slotOf', () => {
  it('names a drive by the whole-disk by-path link that leads to it, never a partition’s', async () => {
    const devices = join(dir, 'dev');
    const byPath = join(dir, 'by-path');
    mkdirSync(devices);
    mkdirSync(byPath);
    for (const name of ['sdb', 'sdb1', 'sdc']) writeFileSync(join(devices, name), '');
    symlinkSync(join(devices, 'sdb1'), join(byPath, 'usb-0:1.1-scsi-0:0:0:0-part1'));
    symlinkSync(join(devices, 'sdb'), join(byPath, 'usb-0:1.1-scsi-0:0:0:0'));
    symlinkSync(join(devices, 'sdc'), join(byPath, 'usb-0:1.2-scsi-0:0:0:0'));
    expect(await slotOf(join(devices, 'sdb'), byPath)).toBe(join(byPath, 'usb-0:1.1-scsi-0:0:0:0'));
    expect(await slotOf(join(devices, 'sdc'), byPath)).toBe(join(byPath, 'usb-0:1.2-scsi-0:0:0:0'));
    expect(await slotOf(join(devices, 'sdd'), byPath)).toBeNull();
    expect(await slotOf(join(devices, 'sdb'), join(dir, 'missing'))).toBeNull();
  });
});
