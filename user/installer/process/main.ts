/**
 * The installer builder: reads an ISO and lays its files out as a FAT32 stick away from the app's
 * main process (which parses nothing from an image), with the user's rights (image-child.ts). It
 * answers the parent's one request (common/contracts/installer-protocol.ts) with the stick's
 * written ranges, writes the stick's bytes into fd 4 (the pipe the helper reads, or the parent
 * relays), says how they ended, and exits. A WIM over 4 GiB is split here, as the user.
 */
import * as v from 'valibot';
import { InstallerRequest, type InstallerMessage } from '../../../common/contracts/installer-protocol.js';
import { toFailure } from '../../../common/domain/failure.js';
import { sendToParent } from '../../images/processes/image-child.js';
import { feedStick, openInstallerSource, planStick, type InstallerSource } from '../installer-job.js';

/** Where the stick's bytes go: the descriptor after stdio and the IPC channel. */
const STICK_FD = 4;

const send = (message: InstallerMessage) => sendToParent(message);

async function build(request: InstallerRequest): Promise<void> {
  let source: InstallerSource | null = null;
  try {
    source = await openInstallerSource(request.iso);
    const plan = planStick(source, { size: request.driveBytes, logicalBlockSize: request.sectorBytes });
    await send({ type: 'plan', extents: plan.extents, files: source.files, fileBytes: source.fileBytes });
    let ended: InstallerMessage | null = null;
    await feedStick(source, plan, STICK_FD, (end) => {
      ended = end.ok ? { type: 'end', bytes: end.bytes ?? 0 } : { type: 'failed', ...end.failure };
    });
    if (ended !== null) await send(ended);
  } catch (error) {
    await send({ type: 'failed', ...toFailure(error) });
  } finally {
    await source?.close();
  }
}

process.once('message', (message: unknown) => {
  const request = v.safeParse(InstallerRequest, message);
  const done = request.success
    ? build(request.output)
    : send({
        type: 'failed',
        code: 'protocol-error',
        message: 'The installer builder was asked something it does not know.',
      });
  void done.finally(() => process.exit(0));
});
