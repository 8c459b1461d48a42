/**
 * The command lines each elevation strategy builds and how each reads a failed launch. sudo and
 * pkexec also run for real in test/user/launcher/elevated.device.test.ts; osascript and UAC cannot run on this
 * machine, so they are checked here at their seam: the exact argv, with every quoting layer
 * undone the way the real consumer would undo it.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { chooseElevation, type ElevationContext } from '../../../user/launcher/elevation/choose.js';
import { directLaunch } from '../../../user/launcher/elevation/direct.js';
import { appleScriptString, osascriptLaunch, shellQuote } from '../../../user/launcher/elevation/osascript.js';
import { pkexecLaunch } from '../../../user/launcher/elevation/pkexec.js';
import { sudoLaunch } from '../../../user/launcher/elevation/sudo.js';
import { AUTHORIZATION_CANCELLED, type LaunchExit } from '../../../user/launcher/elevation/types.js';
import { uacLaunch, uacScript, UAC_CANCELLED, windowsArg } from '../../../user/launcher/elevation/uac.js';
import { MAX_TARGETS } from '../../../common/contracts/helper-protocol.js';
import {
  cardCommandLine,
  HelperArgsError,
  helperArgv,
  parseHelperArgv,
  type HelperArgs,
} from '../../../node/helper-command-line.js';
import { HELPER_V8_FLAGS, macBundleCheck, packagedHelperProgram } from '../../../user/launcher/helper-program.js';

const PROGRAM = '/opt/Sluice/resources/sluice-helper';
const ARGS = ['--write', '--channel', '/tmp/sluice-helper-AbC123', '--parent-pid', '4242', '--', '/dev/sdb'];
const REQUEST = { reason: 'write a disk image to /dev/sdb', interactive: false };

function exit(code: number | null, stderr = '', signal: NodeJS.Signals | null = null): LaunchExit {
  return { code, signal, stderr };
}

describe('direct', () => {
  it('runs the program itself', () => {
    expect(directLaunch.command(PROGRAM, ARGS, REQUEST)).toEqual({ file: PROGRAM, args: ARGS });
    expect(directLaunch.denial(exit(1, 'anything'))).toBeNull();
  });
});

describe('sudo', () => {
  it('without a terminal: -n, so it fails at once instead of waiting for a password nobody can type', () => {
    expect(sudoLaunch.command(PROGRAM, ARGS, REQUEST)).toEqual({
      file: 'sudo',
      args: ['-n', '-p', '[sudo] password for %p to write a disk image to /dev/sdb: ', '--', PROGRAM, ...ARGS],
    });
  });

  it('in a terminal: prompts, and a % in a drive name is not a sudo escape', () => {
    const { args } = sudoLaunch.command(PROGRAM, ARGS, {
      reason: 'write a disk image to /dev/disk%u',
      interactive: true,
    });
    expect(args.slice(0, 3)).toEqual(['-p', '[sudo] password for %p to write a disk image to /dev/disk%%u: ', '--']);
  });

  it('reads its refusals, and nothing else, as denials', () => {
    expect(sudoLaunch.denial(exit(1, 'sudo: a password is required\n'))).toBe(
      'authorization was refused (sudo: a password is required)',
    );
    expect(sudoLaunch.denial(exit(1, 'Sorry, try again.\nsudo: 3 incorrect password attempts\n'))).toContain(
      '3 incorrect password attempts',
    );
    expect(sudoLaunch.denial(exit(1, 'alice is not in the sudoers file.\n'))).toContain('sudoers');
    expect(sudoLaunch.denial(exit(1, 'sudo: /opt/x: command not found\n'))).toBeNull();
    expect(sudoLaunch.denial(exit(3, 'sluice-helper: cannot open the channel'))).toBeNull();
    expect(sudoLaunch.denial(exit(null, '', 'SIGKILL'))).toBeNull();
  });
});

describe('pkexec', () => {
  it('passes the absolute program for the polkit action to match, and refuses a relative one', () => {
    expect(pkexecLaunch.command(PROGRAM, ARGS, REQUEST)).toEqual({ file: 'pkexec', args: [PROGRAM, ...ARGS] });
    expect(() => pkexecLaunch.command('sluice-helper', ARGS, REQUEST)).toThrow(/absolute/);
  });

  it('126 is a dismissed dialog; 127 is a denial only when polkit refused', () => {
    expect(pkexecLaunch.denial(exit(126))).toBe(AUTHORIZATION_CANCELLED);
    expect(
      pkexecLaunch.denial(
        exit(127, 'Error executing command as another user: Not authorized\n\nThis incident has been reported.\n'),
      ),
    ).toBe('authorization was refused (Error executing command as another user: Not authorized)');
    expect(
      pkexecLaunch.denial(exit(127, 'Error executing command as another user: No authentication agent found.\n')),
    ).toContain('authentication agent');
    expect(pkexecLaunch.denial(exit(127, 'Cannot run program /opt/x: No such file or directory\n'))).toBeNull();
    expect(pkexecLaunch.denial(exit(5))).toBeNull();
  });
});

describe('osascript', () => {
  /** Undoes an AppleScript string literal, as AppleScript reads it. */
  function unAppleScript(literal: string): string {
    expect(literal.startsWith('"') && literal.endsWith('"')).toBe(true);
    return literal.slice(1, -1).replace(/\\(.)/g, '$1');
  }

  it('runs the helper in do shell script with administrator privileges and our sentence as the prompt', () => {
    const { file, args } = osascriptLaunch.command(PROGRAM, ARGS, REQUEST);
    expect(file).toBe('/usr/bin/osascript');
    expect(args[0]).toBe('-e');
    const match = /^do shell script (".*") with prompt (".*") with administrator privileges$/.exec(args[1] ?? '');
    expect(match).not.toBeNull();
    expect(unAppleScript(match?.[2] ?? '')).toBe(
      'Sluice needs administrator rights to write a disk image to /dev/sdb.',
    );
    // What /bin/sh then runs is exactly the program and its arguments, exec'd.
    const shell = unAppleScript(match?.[1] ?? '');
    expect(shell.startsWith('exec ')).toBe(true);
    expect(execFileSync('sh', ['-c', `printf '%s\\n' ${shell.slice('exec '.length)}`], { encoding: 'utf8' })).toBe(
      [PROGRAM, ...ARGS].join('\n') + '\n',
    );
  });

  it('a signed build: root verifies the bundle against the team that signs releases before it runs anything from it', () => {
    const check = macBundleCheck('/Applications/Sluice.app', 'ABCDE12345');
    // Apple's code signing requirement language: anchor apple generic (a Developer ID chain) and
    // the leaf certificate's OU, which is the team identifier.
    expect(check).toBe(
      `/usr/bin/codesign --verify --deep --strict -R '=anchor apple generic and certificate leaf[subject.OU] = "ABCDE12345"' '/Applications/Sluice.app' || { echo '/Applications/Sluice.app is not the app its developers signed (codesign --verify failed), so it is not run as administrator. Download Sluice again.' >&2; exit 77; }`,
    );
    const { args } = osascriptLaunch.command(PROGRAM, ARGS, { ...REQUEST, precondition: check });
    const shell = unAppleScript(/^do shell script (".*") with prompt/.exec(args[1] ?? '')?.[1] ?? '');
    expect(shell.startsWith(`${check} && exec `)).toBe(true);
    expect(() => macBundleCheck('/Applications/Sluice.app', 'abc; rm -rf /')).toThrow(/not an Apple team identifier/);
  });

  it.skipIf(process.platform === 'win32')(
    'an unsigned build runs as root only from a bundle that only root can change',
    () => {
      const bundle = mkdtempSync(join(tmpdir(), 'Sluice.app-'));
      try {
        mkdirSync(join(bundle, 'Contents/Resources'), { recursive: true });
        writeFileSync(join(bundle, 'Contents/Resources/sluice-helper'), '');
        chmodSync(bundle, 0o755);
        const run = () =>
          spawnSync('sh', ['-c', `${macBundleCheck(bundle, null)} && exec echo helper`], { encoding: 'utf8' });
        // Owned by whoever runs this: root runs the helper; anyone else is refused.
        expect(run().stdout).toBe(process.getuid?.() === 0 ? 'helper\n' : '');
        chmodSync(join(bundle, 'Contents/Resources/sluice-helper'), 0o664);
        const refused = run();
        expect({ status: refused.status, stdout: refused.stdout }).toEqual({ status: 77, stdout: '' });
        expect(refused.stderr).toBe(
          `This Sluice is an unsigned development build, and ${bundle} is not owned by root alone, so it is not run as administrator: move it where only root can change it (sudo chown -R root:wheel, chmod -R go-w).\n`,
        );
      } finally {
        rmSync(bundle, { recursive: true, force: true });
      }
    },
  );

  it('quotes paths with quotes, backslashes and spaces through both layers', () => {
    const awkward = `/Volumes/My "Apps"/it's\\here/sluice-helper`;
    const literal = appleScriptString(shellQuote(awkward));
    const shell = unAppleScript(literal);
    expect(execFileSync('sh', ['-c', `printf '%s' ${shell}`], { encoding: 'utf8' })).toBe(awkward);
  });

  it('-128 (Cancel in the dialog) is a cancelled authorization; other errors are not denials', () => {
    expect(osascriptLaunch.denial(exit(1, '0:190: execution error: User canceled. (-128)\n'))).toBe(
      AUTHORIZATION_CANCELLED,
    );
    expect(
      osascriptLaunch.denial(
        exit(1, 'execution error: The administrator user name or password was incorrect. (-60005)\n'),
      ),
    ).toContain('refused');
    expect(
      osascriptLaunch.denial(exit(1, '0:190: execution error: sluice-helper: cannot open the channel (3)\n')),
    ).toBeNull();
  });
});

describe('UAC', () => {
  it('quotes arguments as CommandLineToArgvW reads them, and refuses what cmd.exe would interpret', () => {
    expect(windowsArg('\\\\.\\PhysicalDrive2')).toBe('\\\\.\\PhysicalDrive2');
    expect(windowsArg('C:\\Program Files\\Sluice\\main.js')).toBe('"C:\\Program Files\\Sluice\\main.js"');
    expect(windowsArg('C:\\My Dir\\')).toBe('"C:\\My Dir\\\\"');
    expect(windowsArg('')).toBe('""');
    for (const bad of ['a"b', '%PATH%', 'a&b', 'a|b', 'a^b', 'a<b', 'a>b', '!x!', 'a\nb'])
      expect(() => windowsArg(bad)).toThrow(/cannot pass/);
  });

  it('runs an encoded PowerShell script that starts the launcher with the runas verb', () => {
    const program = "C:\\Users\\o'brien\\AppData\\Local\\Programs\\Sluice\\resources\\sluice-helper.cmd";
    const args = [
      '--pipe',
      'sluice-0123456789abcdef0123456789abcdef',
      '--parent-pid',
      '77',
      '--',
      '\\\\.\\PhysicalDrive2',
    ];
    const { file, args: psArgs } = uacLaunch.command(program, args, REQUEST);
    expect(file).toBe('powershell.exe');
    expect(psArgs.slice(0, 5)).toEqual([
      '-NoProfile',
      '-NonInteractive',
      '-ExecutionPolicy',
      'Bypass',
      '-EncodedCommand',
    ]);
    const script = Buffer.from(psArgs[5] ?? '', 'base64').toString('utf16le');
    expect(script).toBe(uacScript(program, args));
    expect(script).toContain(
      "$psi.FileName = 'C:\\Users\\o''brien\\AppData\\Local\\Programs\\Sluice\\resources\\sluice-helper.cmd'",
    );
    expect(script).toContain(
      "$psi.Arguments = '--pipe sluice-0123456789abcdef0123456789abcdef --parent-pid 77 -- \\\\.\\PhysicalDrive2'",
    );
    expect(script).toContain("$psi.Verb = 'runas'");
    expect(script).toContain(`exit ${UAC_CANCELLED}`);
  });

  it('1223 (No in the UAC prompt) is a cancelled authorization', () => {
    expect(uacLaunch.denial(exit(UAC_CANCELLED))).toBe(AUTHORIZATION_CANCELLED);
    expect(uacLaunch.denial(exit(1, 'The system cannot find the file specified.'))).toBeNull();
    expect(uacLaunch.denial(exit(0))).toBeNull();
  });
});

describe('choosing how to get root', () => {
  const context = (overrides: Partial<ElevationContext>): ElevationContext => ({
    platform: 'linux',
    isRoot: false,
    frontEnd: 'app',
    interactive: false,
    installed: () => true,
    ...overrides,
  });

  it('root already: direct, whatever the front end', () => {
    expect(chooseElevation(context({ isRoot: true })).name).toBe('direct');
    expect(chooseElevation(context({ isRoot: true, frontEnd: 'cli', interactive: true, prefer: 'sudo' })).name).toBe(
      'direct',
    );
  });

  it('Linux: pkexec for the app and scripts, sudo for a person at a terminal, each falling back to the other', () => {
    expect(chooseElevation(context({})).name).toBe('pkexec');
    expect(chooseElevation(context({ frontEnd: 'cli' })).name).toBe('pkexec');
    expect(chooseElevation(context({ frontEnd: 'cli', interactive: true })).name).toBe('sudo');
    expect(chooseElevation(context({ frontEnd: 'cli', interactive: true, installed: (c) => c !== 'sudo' })).name).toBe(
      'pkexec',
    );
    expect(chooseElevation(context({ installed: (c) => c !== 'pkexec' })).name).toBe('sudo');
    expect(chooseElevation(context({ installed: () => false })).name).toBe('pkexec');
    expect(chooseElevation(context({ frontEnd: 'cli', prefer: 'sudo' })).name).toBe('sudo');
    expect(chooseElevation(context({ frontEnd: 'cli', interactive: true, prefer: 'pkexec' })).name).toBe('pkexec');
  });

  it('macOS: the system dialog, or sudo in a terminal; Windows: UAC', () => {
    expect(chooseElevation(context({ platform: 'darwin' })).name).toBe('osascript');
    expect(chooseElevation(context({ platform: 'darwin', frontEnd: 'cli', interactive: true })).name).toBe('sudo');
    expect(chooseElevation(context({ platform: 'win32' })).name).toBe('uac');
    expect(chooseElevation(context({ platform: 'win32', frontEnd: 'cli', interactive: true })).name).toBe('uac');
  });

  it('each strategy says how its channel gets through', () => {
    expect(
      [directLaunch, sudoLaunch, pkexecLaunch, osascriptLaunch, uacLaunch].map((e) => [
        e.name,
        e.channel,
        e.passesStdin,
      ]),
    ).toEqual([
      ['direct', 'inherited', true],
      ['sudo', 'fifo', true],
      ['pkexec', 'fifo', true],
      ['osascript', 'fifo', false],
      ['uac', 'named-pipe', false],
    ]);
  });
});

describe('the helper command line', () => {
  const cases: HelperArgs[] = [
    { transport: { kind: 'inherited' }, parentPid: null, targets: ['/dev/sdb'], source: null },
    {
      transport: { kind: 'fifo', dir: '/tmp/sluice-helper-x', imageFifo: false },
      parentPid: 12,
      targets: ['/dev/sdb', '/dev/sdc'],
      source: null,
    },
    {
      transport: { kind: 'fifo', dir: '/var/folders/x/T/sluice-helper-y', imageFifo: true },
      parentPid: 12,
      targets: ['/dev/disk4'],
      source: null,
    },
    {
      transport: { kind: 'named-pipe', name: 'sluice-0123456789abcdef0123456789abcdef' },
      parentPid: 9,
      targets: ['\\\\.\\PhysicalDrive1'],
      source: null,
    },
    // A clone reads one drive and writes another; a backup reads one and writes none.
    {
      transport: { kind: 'fifo', dir: '/tmp/sluice-helper-z', imageFifo: false },
      parentPid: 12,
      targets: ['/dev/sdc'],
      source: '/dev/sdb',
    },
    { transport: { kind: 'inherited' }, parentPid: null, targets: [], source: '/dev/sdb' },
    // An armed station names no drive, only its rules; a card's helper it starts carries the medium root admitted.
    {
      transport: { kind: 'fifo', dir: '/tmp/sluice-helper-s', imageFifo: false },
      parentPid: 14,
      targets: [],
      source: null,
      station: {
        minSize: 8e9,
        maxSize: 64e9,
        slots: ['/dev/disk/by-path/pci-0000:00:14.0-usb-0:1:1.0-scsi-0:0:0:0'],
        virtual: false,
      },
    },
    {
      transport: { kind: 'fifo', dir: '/tmp/sluice-helper-c', imageFifo: true },
      parentPid: 14,
      targets: ['/dev/sdd'],
      source: null,
      medium: '42',
    },
  ];

  it('round-trips, with the mode first (what pkexec picks the prompt by) and the targets last (the end of what a polkit prompt shows)', () => {
    for (const args of cases) {
      const argv = helperArgv(args);
      expect(argv[0]).toBe(args.targets.length === 0 && args.station === undefined ? '--read-only' : '--write');
      expect(argv.slice(argv.indexOf('--') + 1)).toEqual(args.targets);
      expect(parseHelperArgv(argv)).toEqual(args);
    }
  });

  it('refuses what the app would never send', () => {
    const bad: [string[], RegExp][] = [
      [['--write', '--'], new RegExp(`1 to ${MAX_TARGETS} target`)],
      [['--write', '--channel', 'relative/dir', '--', '/dev/sdb'], /absolute/],
      [['--write', '--pipe', 'other-pipe', '--', '/dev/sdb'], /not a Sluice pipe/],
      [['--write', '--image-fifo', '--', '/dev/sdb'], /needs --channel/],
      [
        ['--write', '--channel', '/tmp/x', '--pipe', 'sluice-0123456789abcdef0123456789abcdef', '--', '/dev/sdb'],
        /alternatives/,
      ],
      [['--write', '--parent-pid', '0', '--', '/dev/sdb'], /process id/],
      [['--write', '--parent-pid', '12x', '--', '/dev/sdb'], /process id/],
      [['--write', '--image', '/etc/shadow', '--', '/dev/sdb'], /Unknown option/],
      [
        ['--write', '--channel', '/tmp/sluice-helper-1-x\nAuthentication is not required', '--', '/dev/sdb'],
        /control character/,
      ],
      [['--write', '--station', '--min-size', '1', '--max-size', '2', '--', '/dev/sdb'], /names no drive/],
      [['--write', '--station', '--min-size', '3', '--max-size', '2', '--'], /above --max-size/],
      [['--write', '--station', '--min-size', '1e9', '--max-size', '2', '--'], /number of bytes/],
      [['--write', '--station', '--min-size', '1', '--max-size', '2', '--slot', 'by-path/x', '--'], /absolute path/],
      [['--write', '--medium', '42', '--', '/dev/sdb', '/dev/sdc'], /one drive/],
      [['--write', '--medium', '4x', '--', '/dev/sdb'], /disk sequence number/],
      // The mode pkexec picks the prompt by: read-only exactly when nothing is written.
      [['--source', '/dev/sdb', '--'], /first argument must be the mode/],
      [['--write', '--source', '/dev/sdb', '--'], /writes no drive is started with --read-only/],
      [['--read-only', '--', '/dev/sdb'], /names no drive to write/],
      [['--read-only', '--station', '--min-size', '1', '--max-size', '2', '--'], /arms no station/],
      [['--read-only', '--write', '--source', '/dev/sdb', '--'], /given once, as the first argument/],
      // pkexec picks the prompt by the first argument alone: the mode is there, always, and nowhere else.
      [['--', '/dev/sdb'], /first argument must be the mode, --write or --read-only.*not "--"/],
      [[], /first argument must be the mode.*not nothing/],
      [['--channel', '/tmp/x', '--write', '--', '/dev/sdb'], /first argument must be the mode.*not "--channel"/],
      [['--source', '/dev/sdb', '--read-only', '--'], /first argument must be the mode/],
      [['--write', '--channel', '/tmp/x', '--write', '--', '/dev/sdb'], /given once, as the first argument/],
      [
        ['--write', '--', ...Array.from({ length: MAX_TARGETS + 1 }, (_, i) => `/dev/sd${i}`)],
        new RegExp(`1 to ${MAX_TARGETS} target`),
      ],
    ];
    for (const [argv, reason] of bad) {
      expect(() => parseHelperArgv(argv), argv.join(' ')).toThrow(HelperArgsError);
      expect(() => parseHelperArgv(argv), argv.join(' ')).toThrow(reason);
    }
  });

  it('an armed station runs a card’s job only for one drive over FIFOs that carry its image too', () => {
    const card = (...argv: string[]) => cardCommandLine(parseHelperArgv(['--write', ...argv]));
    expect(card('--channel', '/tmp/sluice-helper-c', '--image-fifo', '--parent-pid', '14', '--', '/dev/sdd')).toEqual({
      target: '/dev/sdd',
      dir: '/tmp/sluice-helper-c',
    });
    // Without the image's FIFO the job would read the root side's own standard input as the image.
    expect(card('--channel', '/tmp/sluice-helper-c', '--parent-pid', '14', '--', '/dev/sdd')).toEqual({
      refused:
        "its image does not come through its channel's FIFO (--image-fifo), the only way a card's image reaches the station",
    });
    expect(card('--', '/dev/sdd')).toEqual({ refused: 'its channel is not a directory of FIFOs' });
    expect(card('--channel', '/tmp/c', '--image-fifo', '--', '/dev/sdd', '/dev/sde')).toEqual({
      refused: 'a card helper writes exactly one drive',
    });
    expect(card('--channel', '/tmp/c', '--image-fifo', '--medium', '42', '--', '/dev/sdd')).toEqual({
      refused: 'root names the medium itself',
    });
  });
});

describe('what packaging ships', () => {
  it('the launchers run the entry with exactly the helper’s V8 flags', () => {
    const sh = readFileSync('build/helper/sluice-helper', 'utf8');
    const cmd = readFileSync('build/helper/sluice-helper.cmd', 'utf8');
    expect(sh).toContain(`${HELPER_V8_FLAGS.join(' ')} \\\n  "$resources/app.asar.unpacked/out/run/helper.js" "$@"`);
    expect(cmd).toContain(`${HELPER_V8_FLAGS.join(' ')} "%~dp0app.asar.unpacked\\out\\run\\helper.js" %*`);
    expect(sh).toContain('ELECTRON_RUN_AS_NODE=1');
    expect(cmd).toContain('set ELECTRON_RUN_AS_NODE=1');
  });

  it('the app finds the launcher in its resources', () => {
    expect(packagedHelperProgram('/opt/Sluice/resources', 'linux').file).toBe('/opt/Sluice/resources/sluice-helper');
    expect(packagedHelperProgram('/Applications/Sluice.app/Contents/Resources', 'darwin').file).toBe(
      '/Applications/Sluice.app/Contents/Resources/sluice-helper',
    );
    expect(packagedHelperProgram('C:\\Program Files\\Sluice\\resources', 'win32').file).toBe(
      'C:\\Program Files\\Sluice\\resources\\sluice-helper.cmd',
    );
  });

  it('the polkit action matches the launcher and puts the helper’s command line, ending with the drive, in its message', () => {
    const policy = readFileSync('build/polkit/org.sluice.write-disk-image.policy', 'utf8');
    expect(policy).toContain('<action id="org.sluice.write-disk-image">');
    expect(policy).toContain(
      '<annotate key="org.freedesktop.policykit.exec.path">/opt/Sluice/resources/sluice-helper</annotate>',
    );
    expect(policy).toContain(
      '<message>Authentication is required to write a disk image to a drive: $(command_line)</message>',
    );
  });

  it('two actions for the one launcher, each picked by the helper’s mode (its first argument), so a backup’s prompt says it reads', () => {
    const policy = readFileSync('build/polkit/org.sluice.write-disk-image.policy', 'utf8');
    // polkitd skips a file that is not well-formed XML, and pkexec then asks generically: "--" cannot be inside a comment.
    for (const [, comment = ''] of policy.matchAll(/<!--([\s\S]*?)-->/g)) expect(comment).not.toContain('--');
    const actions = [...policy.matchAll(/<action id="([^"]+)">([\s\S]*?)<\/action>/g)].map(([, id, body = '']) => ({
      id,
      path: /exec\.path">([^<]+)</.exec(body)?.[1],
      argv1: /exec\.argv1">([^<]+)</.exec(body)?.[1],
      message: /<message>([^<]+)</.exec(body)?.[1],
    }));
    expect(actions).toEqual([
      {
        id: 'org.sluice.write-disk-image',
        path: '/opt/Sluice/resources/sluice-helper',
        argv1: '--write',
        message: expect.stringContaining('write a disk image'),
      },
      {
        id: 'org.sluice.read-drive',
        path: '/opt/Sluice/resources/sluice-helper',
        argv1: '--read-only',
        message: expect.stringMatching(/read a whole drive.*no data is written to it\): \$\(command_line\)$/),
      },
    ]);
  });
});
