import { runTool } from '../../node/run-tool.js';

const PHYSICAL_DRIVE = /^\\\\\.\\PhysicalDrive(\d+)$/i;

/** The disk number of \\.\PhysicalDriveN, or null for anything else (volumes, files). */
export function physicalDriveNumber(path: string): number | null {
  const match = PHYSICAL_DRIVE.exec(path);
  return match?.[1] === undefined ? null : Number(match[1]);
}

/**
 * powershell.exe arguments that run `script`. It goes base64-encoded (UTF-16LE, as PowerShell
 * wants it), so no quoting rule of cmd.exe, MSVCRT or PowerShell can change what runs.
 */
export function powershellArgs(script: string): string[] {
  return ['-NoProfile', '-NonInteractive', '-EncodedCommand', Buffer.from(script, 'utf16le').toString('base64')];
}

export function runPowerShell(script: string): Promise<string> {
  return runTool('powershell.exe', powershellArgs(script));
}
