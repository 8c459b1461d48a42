import { execFileSync } from 'node:child_process';

/**
 * The whole disk holding / (here /dev/vda), found by reading only: findmnt and lsblk. Without
 * --nofsroot, findmnt names a bind-mounted root (a chroot, a container) "/dev/vda[/dir]", which
 * lsblk refuses: 5 tests failed so in a fresh Debian chroot.
 */
export function rootDisk(): string {
  const root = execFileSync('findmnt', ['--noheadings', '--nofsroot', '--output', 'SOURCE', '/'], {
    encoding: 'utf8',
  }).trim();
  const parent = execFileSync('lsblk', ['--noheadings', '--nodeps', '--output', 'PKNAME', root], {
    encoding: 'utf8',
  }).trim();
  return parent === '' ? root : `/dev/${parent}`;
}
