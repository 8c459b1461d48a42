/**
 * Modules that start processes from files next to themselves (the helper's main.js, the decoder's
 * decode/main.js), loaded from the build output as `npm start` runs them: vitest runs the sources,
 * which have no .js files beside them. `npm test` builds first.
 */
import { resolve } from 'node:path';
import type * as AppServiceModule from '../../electron/core/app-service.js';
import type * as ImageProbeModule from '../../electron/core/image-probe.js';
import type * as HelperLaunch from '../../user/launcher/launch.js';

export async function builtStartHelper(): Promise<typeof HelperLaunch.startHelper> {
  return ((await import(resolve('out/user/launcher/launch.js'))) as typeof HelperLaunch).startHelper;
}

/** The app's core as built: its flashes start the built decoder for compressed images. */
export async function builtCreateAppService(): Promise<typeof AppServiceModule.createAppService> {
  return ((await import(resolve('out/electron/core/app-service.js'))) as typeof AppServiceModule).createAppService;
}

/** The main process's image probe as built: it reads a compressed image's partition table through the built decoder. */
export async function builtImageProbe(): Promise<typeof ImageProbeModule> {
  return (await import(resolve('out/electron/core/image-probe.js'))) as typeof ImageProbeModule;
}
