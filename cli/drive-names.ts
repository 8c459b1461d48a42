import { driveName } from '../user/drives/drive-name.js';

/**
 * The drives named on the command line under their own names (driveName), so that the drive
 * listing's checks, the confirmation and the authorization prompt all see the real disk; says
 * where a link led.
 */
export function namedDrives(paths: readonly string[]): Promise<string[]> {
  return Promise.all(
    paths.map(async (path) => {
      const name = await driveName(path);
      if (name !== path) process.stderr.write(`sluice: ${path} is ${name}.\n`);
      return name;
    }),
  );
}
