import { AUTHORIZATION_CANCELLED, type Elevation } from './types.js';

/** Win32 ERROR_CANCELLED: the user answered No in the UAC prompt. The script exits with it. */
export const UAC_CANCELLED = 1223;

/**
 * Quotes one argument the way CommandLineToArgvW and the C runtime read it back. Characters
 * that cmd.exe would interpret (the packaged launcher is a .cmd) are refused rather than escaped:
 * our arguments are paths, pipe names, numbers and \\.\PhysicalDriveN, none of which need them.
 */
export function windowsArg(arg: string): string {
  if (/["%!^&|<>\r\n]/.test(arg)) throw new Error(`cannot pass ${JSON.stringify(arg)} safely through UAC`);
  if (arg.length > 0 && !/\s/.test(arg)) return arg;
  // Backslashes before the closing quote must be doubled, or they would escape it.
  return `"${arg.replace(/(\\+)$/, '$1$1')}"`;
}

/** A PowerShell single-quoted string literal. */
function psString(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

/**
 * The script the unelevated PowerShell runs. Process.Start with the "runas" verb is what
 * Start-Process -Verb RunAs does, but it throws the Win32Exception itself, so a cancelled prompt
 * is recognised by its error number (1223) rather than by a translated message.
 */
export function uacScript(program: string, args: readonly string[]): string {
  return [
    "$ErrorActionPreference = 'Stop'",
    '$psi = New-Object System.Diagnostics.ProcessStartInfo',
    `$psi.FileName = ${psString(program)}`,
    `$psi.Arguments = ${psString(args.map(windowsArg).join(' '))}`,
    "$psi.Verb = 'runas'",
    '$psi.UseShellExecute = $true',
    "$psi.WindowStyle = 'Hidden'",
    'try { $p = [System.Diagnostics.Process]::Start($psi) } catch {',
    '  $e = $_.Exception',
    '  while ($e -ne $null -and -not ($e -is [System.ComponentModel.Win32Exception])) { $e = $e.InnerException }',
    `  if ($e -ne $null -and $e.NativeErrorCode -eq ${UAC_CANCELLED}) { exit ${UAC_CANCELLED} }`,
    '  [Console]::Error.WriteLine($_.Exception.Message); exit 1',
    '}',
    '$p.WaitForExit()',
    'exit $p.ExitCode',
  ].join('\n');
}

/**
 * Windows: UAC elevation of the helper launcher (build/helper/sluice-helper.cmd) through
 * PowerShell, which ships with every supported Windows. ShellExecute passes no descriptors, so
 * the channel and the image go through named pipes the app creates (pipe-servers.ts). The script
 * travels as -EncodedCommand (base64 UTF-16LE), so no layer of quoting can break it.
 */
export const uacLaunch: Elevation = {
  name: 'uac',
  channel: 'named-pipe',
  passesStdin: false,
  command: (program, args) => ({
    file: 'powershell.exe',
    args: [
      '-NoProfile',
      '-NonInteractive',
      '-ExecutionPolicy',
      'Bypass',
      '-EncodedCommand',
      Buffer.from(uacScript(program, args), 'utf16le').toString('base64'),
    ],
  }),
  // Any other failure to start (the script prints why) is not a refusal by the user.
  denial: (exit) => (exit.code === UAC_CANCELLED ? AUTHORIZATION_CANCELLED : null),
};
