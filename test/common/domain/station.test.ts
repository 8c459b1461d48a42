import { describe, expect, it } from 'vitest';
import {
  admitDrive,
  DEFAULT_MAX_DRIVE_BYTES,
  STATION_LOG_COLUMNS,
  stationLogCsv,
  type StationLogEntry,
  type StationRules,
} from '../../../common/domain/station.js';
import { linuxDrives, usbCard } from '../../support/drive-fixtures.js';

const rules: StationRules = {
  imageSize: 4_000_000_000,
  minSize: 4_000_000_000,
  maxSize: DEFAULT_MAX_DRIVE_BYTES,
  slots: null,
  virtual: false,
};

describe('admitDrive: what an armed station writes', () => {
  it('admits a USB card, an SD card and a removable drive within the range', () => {
    expect(admitDrive(usbCard(), rules, null, null)).toEqual({ admitted: true });
    expect(admitDrive(usbCard('/dev/mmcblk0', { bus: 'sd', removable: false }), rules, null, null)).toEqual({
      admitted: true,
    });
    expect(admitDrive(usbCard('/dev/sdy', { bus: 'scsi', removable: true }), rules, null, null)).toEqual({
      admitted: true,
    });
  });

  it('never the running system, an internal disk or a fixed SATA disk, whatever else they are', () => {
    const running = linuxDrives.find((d) => d.system === 'running');
    expect(running).toBeDefined();
    if (running === undefined) return;
    expect(admitDrive(running, { ...rules, imageSize: 1, minSize: 1 }, null, null)).toMatchObject({
      admitted: false,
      code: 'target-system',
    });
    expect(admitDrive(usbCard('/dev/sdx', { system: 'internal' }), rules, null, null)).toMatchObject({
      admitted: false,
      code: 'not-a-card',
    });
    expect(admitDrive(usbCard('/dev/sdw', { bus: 'sata', removable: false }), rules, null, null)).toMatchObject({
      admitted: false,
      code: 'not-a-card',
    });
  });

  it('refuses too small, read-only and the image’s own drive with the flash’s reasons', () => {
    expect(admitDrive(usbCard('/dev/sdz', { size: 3_999_999_999 }), rules, null, null)).toMatchObject({
      admitted: false,
      code: 'target-too-small',
      message: expect.stringMatching(/too small/) as unknown,
    });
    expect(admitDrive(usbCard('/dev/sdz', { readOnly: true }), rules, null, null)).toMatchObject({
      admitted: false,
      code: 'target-read-only',
    });
    expect(admitDrive(usbCard('/dev/sdz'), rules, null, '/dev/sdz')).toMatchObject({
      admitted: false,
      code: 'target-is-source',
    });
  });

  it('keeps to the size range at both ends, inclusive', () => {
    const range = { ...rules, minSize: 8_000_000_000, maxSize: 32_000_000_000 };
    expect(admitDrive(usbCard('/dev/sdz', { size: 7_999_999_999 }), range, null, null)).toMatchObject({
      admitted: false,
      code: 'outside-size-range',
    });
    expect(admitDrive(usbCard('/dev/sdz', { size: 8_000_000_000 }), range, null, null)).toEqual({ admitted: true });
    expect(admitDrive(usbCard('/dev/sdz', { size: 32_000_000_000 }), range, null, null)).toEqual({ admitted: true });
    expect(admitDrive(usbCard('/dev/sdz', { size: 32_000_000_001 }), range, null, null)).toMatchObject({
      admitted: false,
      code: 'outside-size-range',
    });
  });

  it('with a slot list, only cards in those slots', () => {
    const slot = '/dev/disk/by-path/pci-0000:00:14.0-usb-0:1.2:1.0-scsi-0:0:0:0';
    const listed = { ...rules, slots: [slot] };
    expect(admitDrive(usbCard(), listed, slot, null)).toEqual({ admitted: true });
    expect(admitDrive(usbCard(), listed, `${slot.slice(0, -1)}1`, null)).toMatchObject({
      admitted: false,
      code: 'outside-slots',
    });
    expect(admitDrive(usbCard(), listed, null, null)).toMatchObject({ admitted: false, code: 'outside-slots' });
  });

  it('takes virtual drives only when asked to (--virtual)', () => {
    const loop = usbCard('/dev/loop7', { bus: 'virtual', virtual: true, removable: false });
    expect(admitDrive(loop, rules, null, null)).toMatchObject({
      admitted: false,
      code: 'not-a-card',
      message: expect.stringMatching(/--virtual/) as unknown,
    });
    expect(admitDrive(loop, { ...rules, virtual: true }, null, null)).toEqual({ admitted: true });
  });
});

describe('stationLogCsv', () => {
  const entry: StationLogEntry = {
    time: '2026-11-24T05:00:00.000Z',
    card: 3,
    slot: '/dev/disk/by-path/pci-0000:00:14.0-usb-0:1:1.0-scsi-0:0:0:0',
    device: '/dev/sdb',
    model: '=HYPERLINK("x"), "Ultra"',
    serial: null,
    capacity: 31_914_983_424,
    capacityCheck: 'passed',
    image: 'raspios, lite.img.xz',
    imageSha256: 'a'.repeat(64),
    hostname: 'pi-3',
    bytesWritten: 2_000_000_000,
    bytesSkipped: 500,
    writeSpeed: 21_000_000,
    verifySpeed: 80_000_000,
    repairedBlocks: 0,
    seconds: 120.5,
    result: 'failed',
    code: 'verify-mismatch',
    message: 'Line one\nline two',
  };

  it('has a header of every field and one quoted, formula-safe row per line', () => {
    const csv = stationLogCsv([entry]);
    const [header, row] = csv.split('\r\n');
    expect(header).toBe(STATION_LOG_COLUMNS.join(','));
    expect(STATION_LOG_COLUMNS).toHaveLength(Object.keys(entry).length);
    expect(row).toBe(
      `2026-11-24T05:00:00.000Z,3,${entry.slot},/dev/sdb,"'=HYPERLINK(""x""), ""Ultra""",,31914983424,passed,"raspios, lite.img.xz",${'a'.repeat(64)},pi-3,2000000000,500,21000000,80000000,0,120.5,failed,verify-mismatch,"Line one\nline two"`,
    );
    expect(csv.endsWith('"\r\n')).toBe(true);
  });
});
