import { execFileSync } from 'node:child_process';

/** The whole disk holding / (here /dev/vda), found by reading only: findmnt and lsblk. */
export function rootDisk(): string {
  const root = execFileSync('findmnt', ['--noheadings', '--output', 'SOURCE', '/'], { encoding: 'utf8' }).trim();
  const parent = execFileSync('lsblk', ['--noheadings', '--nodeps', '--output', 'PKNAME', root], { encoding: 'utf8' }).trim();
  return parent === '' ? root : `/dev/${parent}`;
}
