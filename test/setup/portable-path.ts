/**
 * `npm run test:portable`: the "portable" tests (vitest.config.ts) with a PATH that holds Node and
 * only the POSIX commands macOS also has in /bin and /usr/bin: no GNU-only coreutils (truncate,
 * timeout, sha256sum), no util-linux (losetup, sfdisk, findmnt, lsblk), no mkfs.*, no xz, zstd,
 * qemu-img, bmaptool, mtools or xxhash. A test that needs any of those fails here, and belongs in a
 * *.linux.test.ts file. (What it cannot show: a read of /proc, which Linux has whatever the PATH.)
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findTool } from '../../node/run-tool.js';

export const MACOS_COMMANDS = [
  'sh',
  'bash',
  'env',
  'cat',
  'ls',
  'cp',
  'mv',
  'rm',
  'mkdir',
  'rmdir',
  'chmod',
  'ln',
  'touch',
  'dd',
  'head',
  'tail',
  'wc',
  'sort',
  'uniq',
  'tr',
  'cut',
  'sed',
  'awk',
  'grep',
  'find',
  'xargs',
  'tee',
  'diff',
  'cmp',
  'basename',
  'dirname',
  'mktemp',
  'mkfifo',
  'sleep',
  'date',
  'uname',
  'id',
  'whoami',
  'ps',
  'kill',
  'true',
  'false',
  'echo',
  'printf',
  'test',
  'expr',
  'getconf',
  'hostname',
  'gzip',
  'gunzip',
  'bzip2',
  'zip',
  'unzip',
  'tar',
  'openssl',
  'git',
  'sudo',
  'python3',
  'file',
  'du',
];

const dir = mkdtempSync(join(tmpdir(), 'sluice-portable-path-'));
try {
  for (const command of MACOS_COMMANDS) {
    const found = await findTool(command);
    if (found) symlinkSync(found, join(dir, command));
  }
  symlinkSync(process.execPath, join(dir, 'node'));
  const vitest = join('node_modules', 'vitest', 'vitest.mjs');
  const run = spawnSync(process.execPath, [vitest, 'run', '--project', 'portable', ...process.argv.slice(2)], {
    stdio: 'inherit',
    env: { ...process.env, PATH: dir },
  });
  process.exitCode = run.status ?? 1;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
