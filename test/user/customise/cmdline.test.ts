import { describe, expect, it } from 'vitest';
import { withArguments } from '../../../user/customise/cmdline.js';

describe('cmdline.txt', () => {
  it('adds arguments to the one line and keeps its line break', () => {
    expect(withArguments('console=tty1 root=PARTUUID=1-02 rootwait quiet\n', ['a=1', 'b'])).toBe('console=tty1 root=PARTUUID=1-02 rootwait quiet a=1 b\n');
    expect(withArguments('console=tty1  rootwait ', ['a=1'])).toBe('console=tty1 rootwait a=1');
  });

  it('an argument of the same name is replaced, not repeated; other lines stay as they are', () => {
    expect(withArguments('root=x systemd.run=/old ds=nocloud\r\nsecond line\n', ['systemd.run=/boot/firmware/firstrun.sh', 'ds=nocloud;s=/boot/'])).toBe('root=x systemd.run=/boot/firmware/firstrun.sh ds=nocloud;s=/boot/\r\nsecond line\n');
  });
});
