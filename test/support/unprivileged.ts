/**
 * An ordinary user for tests of elevation: the app side runs as this user, so only sudo or
 * pkexec can give the helper the root it needs to open a loop device. Everything here is set up
 * by the test (as root) and limited to this machine's test runs.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { HELPER_V8_FLAGS, type HelperProgram } from '../../user/launcher/helper-program.js';

/** A system account with no home, no shell and no password: it can only do what a rule here allows. */
export const TEST_USER = 'sluicetest';

/** The built helper as the CLI runs it (vitest runs the TypeScript, whose own entry path is not the built one). */
export function builtHelper(): HelperProgram {
  return { file: process.execPath, args: [...HELPER_V8_FLAGS, resolve('out/run/helper.js')], env: {} };
}

/** Creates the test user if this machine does not have it yet; returns its ids. */
export function ensureTestUser(): { uid: number; gid: number } {
  try {
    execFileSync('id', ['-u', TEST_USER], { stdio: 'ignore' });
  } catch {
    // Two test files may race to create it; the loser's error is harmless.
    try {
      execFileSync('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', TEST_USER], {
        stdio: 'ignore',
      });
    } catch {
      execFileSync('id', ['-u', TEST_USER], { stdio: 'ignore' });
    }
  }
  const uid = Number(execFileSync('id', ['-u', TEST_USER], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', TEST_USER], { encoding: 'utf8' }).trim());
  return { uid, gid };
}

/** Lets the test user read `file` (an image in a test's scratch directory), and nothing more. */
export function shareWithTestUser(file: string): void {
  chmodSync(dirname(file), 0o755);
  chmodSync(file, 0o644);
}

/**
 * A sudoers rule that lets the test user run exactly the built helper as root, without a
 * password, and nothing else. Checked with visudo before sudo can see it; returns its remover.
 */
export function allowSudoForHelper(): () => void {
  const helper = builtHelper();
  return allowSudo([helper.file, ...helper.args]);
}

/** The built `sluice` command as the test user would run it with sudo. */
export function builtCli(): string[] {
  return [process.execPath, resolve('out/run/sluice.js')];
}

/**
 * A sudoers rule that lets the test user run `command` (with any arguments) as root without a
 * password, keeping the environment variables `keep`; returns its remover.
 */
export function allowSudo(command: readonly string[], keep: readonly string[] = []): () => void {
  const defaults = keep.length === 0 ? '' : `Defaults:${TEST_USER} env_keep += "${keep.join(' ')}"\n`;
  const rule = `${defaults}${TEST_USER} ALL=(root) NOPASSWD: ${command.join(' ')} *\n`;
  const name = `sluice-test-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  const staged = `/etc/sudoers.d/.${name}`;
  writeFileSync(staged, rule, { mode: 0o440 });
  execFileSync('visudo', ['--check', '--quiet', '--file', staged]);
  execFileSync('mv', [staged, `/etc/sudoers.d/${name}`]);
  return () => rmSync(`/etc/sudoers.d/${name}`, { force: true });
}

/** The argv prefix that runs a command as the test user: real and effective ids, no supplementary groups. */
export function asTestUser(): string[] {
  const { uid, gid } = ensureTestUser();
  return ['setpriv', `--reuid=${uid}`, `--regid=${gid}`, '--clear-groups', '--'];
}
