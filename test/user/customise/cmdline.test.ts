import { describe, expect, it } from 'vitest';
import { cmdlineProblem, withArguments } from '../../../user/customise/cmdline.js';

describe('cmdline.txt', () => {
  it('adds arguments to the one line and keeps its line break', () => {
    expect(withArguments('console=tty1 root=PARTUUID=1-02 rootwait quiet\n', ['a=1', 'b'])).toBe(
      'console=tty1 root=PARTUUID=1-02 rootwait quiet a=1 b\n',
    );
    expect(withArguments('console=tty1  rootwait ', ['a=1'])).toBe('console=tty1 rootwait a=1');
  });

  it('an argument of the same name is replaced, not repeated; other lines stay as they are', () => {
    expect(
      withArguments('root=x systemd.run=/old ds=nocloud\r\nsecond line\n', [
        'systemd.run=/boot/firmware/firstrun.sh',
        'ds=nocloud;s=/boot/',
      ]),
    ).toBe('root=x systemd.run=/boot/firmware/firstrun.sh ds=nocloud;s=/boot/\r\nsecond line\n');
  });

  it('a command line as read is text with arguments; NULs, other control bytes, bad UTF-8 or an empty line are not', () => {
    expect(cmdlineProblem(Buffer.from('console=tty1 root=PARTUUID=1-02\r\n\tsecond\n'))).toBeNull();
    expect(cmdlineProblem(Buffer.alloc(1029))).toBe('it holds a control character (0x00) at byte 0');
    expect(cmdlineProblem(Buffer.from('root=/dev/sda2 quiet\u0001x'))).toBe(
      'it holds a control character (0x01) at byte 20',
    );
    expect(cmdlineProblem(Buffer.from([0x72, 0x6f, 0xff]))).toBe('it is not UTF-8 text');
    expect(cmdlineProblem(Buffer.from(' \nroot=x\n'))).toBe('its first line is empty');
  });
});
