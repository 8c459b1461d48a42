import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  appImageHelperProgram,
  HELPER_V8_FLAGS,
  PACKAGED_HELPER_ENTRY,
} from '../../../user/launcher/helper-program.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));
function dir(): string {
  const made = mkdtempSync(join(tmpdir(), 'sluice-appimage-'));
  dirs.push(made);
  return made;
}
const uid = process.getuid?.() ?? 0;

/** An AppImage file with `mode`. */
function appImage(mode: number): string {
  const file = join(dir(), 'Sluice-0.1.0-x86_64.AppImage');
  writeFileSync(file, '#!/bin/sh\n');
  chmodSync(file, mode);
  return file;
}

describe.skipIf(process.platform === 'win32')('the helper of an AppImage', () => {
  it('is the AppImage itself, in Node mode, with an empty environment but for who the user is', () => {
    const file = appImage(0o755);
    const program = appImageHelperProgram(file, uid);
    expect(program.file).toBe('/usr/bin/env');
    expect(program.args.slice(0, 4 + HELPER_V8_FLAGS.length)).toEqual([
      '-i',
      'ELECTRON_RUN_AS_NODE=1',
      `PKEXEC_UID=${uid}`,
      file,
      ...HELPER_V8_FLAGS,
    ]);
    expect(program.args.slice(-4, -2)[0]).toBe('-e');
    // Node's own options end there: the helper's (which begin with --) are arguments; --no-sandbox
    // among them keeps AppRun from putting its own before Node's options (see the loader test).
    expect(program.args.slice(-2)).toEqual(['--', '--no-sandbox']);
  });

  it('refuses a file its group or anyone may write, saying why and how to fix it', () => {
    for (const mode of [0o775, 0o757, 0o777]) {
      const file = appImage(mode);
      expect(() => appImageHelperProgram(file, uid)).toThrow(
        `The AppImage ${file} can be changed by other users (mode ${mode.toString(8)}), so Sluice will not run it as administrator. Make it writable by you alone: chmod go-w '${file}'.`,
      );
    }
  });

  it('refuses a file another user owns, and one that is not there', () => {
    const file = appImage(0o755);
    // Root may own the file (an AppImage installed for all); as root, give it to someone else.
    if (uid === 0) chownSync(file, 4242, 4242);
    expect(() => appImageHelperProgram(file, uid === 0 ? 0 : uid + 1)).toThrow(
      `The AppImage ${file} belongs to another user (uid ${uid === 0 ? 4242 : uid}), so Sluice will not run it as administrator.`,
    );
    expect(() => appImageHelperProgram(join(dir(), 'gone.AppImage'), uid)).toThrow(/cannot be found/);
  });

  it('its loader runs the entry under the runtime’s APPDIR with the helper’s arguments after it, or says that there is none', () => {
    const program = appImageHelperProgram(appImage(0o755), uid);
    const nodeArgs = program.args.slice(program.args.indexOf('-e'));
    const appDir = dir();
    const entry = join(appDir, PACKAGED_HELPER_ENTRY);
    mkdirSync(join(entry, '..'), { recursive: true });
    writeFileSync(entry, 'process.stdout.write(JSON.stringify(process.argv.slice(1)));\n');
    const helperArgs = ['--write', '--channel', '/tmp/x', '--', '/dev/sdz'];
    const run = spawnSync(process.execPath, [...nodeArgs, ...helperArgs], {
      env: { APPDIR: appDir },
      encoding: 'utf8',
    });
    expect(run.stderr).toBe('');
    expect(JSON.parse(run.stdout)).toEqual([entry, ...helperArgs]);

    // Where AppRun finds no user namespaces it adds --no-sandbox before everything unless the
    // arguments hold it: Node would refuse it there (exit 9, "bad option").
    const refused = spawnSync(process.execPath, ['--no-sandbox', ...nodeArgs.slice(0, 2), ...helperArgs], {
      env: { APPDIR: appDir },
      encoding: 'utf8',
    });
    expect(refused.status).toBe(9);
    expect(refused.stderr).toContain(`${process.execPath}: bad option: --no-sandbox\n`);

    const alone = spawnSync(process.execPath, [...nodeArgs, ...helperArgs], { env: {}, encoding: 'utf8' });
    expect({ status: alone.status, stderr: alone.stderr }).toEqual({
      status: 1,
      stderr: 'sluice-helper: not started by the AppImage runtime (no APPDIR)\n',
    });
  });
});
