import { ipcMain, type IpcMainInvokeEvent } from 'electron';
import { refuse } from '../../common/contracts/api-result.js';
import { INVOKE_CHANNELS, type InvokeMethod } from '../../common/contracts/ipc-channels.js';
import type { AppService } from '../core/app-service.js';
import { isTrustedSender, type SenderFrame } from '../core/security.js';

function senderOf(event: IpcMainInvokeEvent): SenderFrame | null {
  const frame = event.senderFrame;
  return frame === null ? null : { url: frame.url, isMainFrame: frame.parent === null };
}

/** One ipcMain handler per channel: the sender must be the app's top-level page, the arguments must match the schema. */
export function registerIpcHandlers(service: AppService): void {
  for (const method of Object.keys(INVOKE_CHANNELS) as InvokeMethod[]) {
    ipcMain.handle(INVOKE_CHANNELS[method], async (event, ...args: unknown[]) => {
      if (!isTrustedSender(senderOf(event)))
        return refuse('untrusted-sender', 'Only the Sluice window may ask for this.');
      return service.invoke(method, args);
    });
  }
}
