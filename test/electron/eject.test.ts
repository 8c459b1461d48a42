import { describe, expect, it } from 'vitest';
import { ejectCommand } from '../../electron/core/eject.js';

describe('ejecting a drive after a flash', () => {
  it('uses what the desktop itself uses: udisksctl on Linux, diskutil on macOS', () => {
    expect(ejectCommand('/dev/sdb', 'linux')).toEqual({ file: 'udisksctl', args: ['power-off', '--block-device', '/dev/sdb', '--no-user-interaction'] });
    expect(ejectCommand('/dev/disk4', 'darwin')).toEqual({ file: 'diskutil', args: ['eject', '/dev/disk4'] });
  });

  it('has no command on Windows yet, so the app says how to remove the drive instead', () => {
    expect(ejectCommand('\\\\.\\PhysicalDrive2', 'win32')).toBeNull();
  });
});
