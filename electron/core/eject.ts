import { runTool } from '../../worker/engine/platform/run.js';

/**
 * The system tool that ejects (powers off, on Linux) a whole drive, or null where none is wired
 * up. udisksctl is what desktop file managers use on Linux, and works for the unprivileged user
 * through polkit; diskutil is macOS's own.
 */
export function ejectCommand(device: string, platform: NodeJS.Platform): { file: string; args: string[] } | null {
  switch (platform) {
    case 'linux':
      return { file: 'udisksctl', args: ['power-off', '--block-device', device, '--no-user-interaction'] };
    case 'darwin':
      return { file: 'diskutil', args: ['eject', device] };
    default:
      return null;
  }
}

/** Ejects `device`; throws with a sentence saying what to do instead when it cannot. */
export async function ejectDrive(device: string): Promise<void> {
  const command = ejectCommand(device, process.platform);
  if (command === null) throw new Error(`${device} was not ejected: use "Safely Remove Hardware" before unplugging it.`);
  try {
    await runTool(command.file, command.args);
  } catch (error) {
    throw new Error(`${device} was not ejected (${error instanceof Error ? error.message : String(error)}): eject it from your file manager before unplugging it.`);
  }
}
