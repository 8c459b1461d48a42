/**
 * The catalogue process: reads an OS catalogue (read-catalogue.ts) away from the app and the CLI,
 * so that JSON from a server is parsed where running out of memory or never finishing takes only
 * this process down (catalogue-launch.ts gives it its memory cap and its time). It runs with the
 * user's rights. The parent sends one CatalogueRequest over the IPC channel; this answers with
 * exactly one CatalogueReply (common/contracts/catalogue-protocol.ts) and exits.
 */
import * as v from 'valibot';
import { CatalogueRequest, type CatalogueReply } from '../../../common/contracts/catalogue-protocol.js';
import { toFailure } from '../../../common/domain/failure.js';
import { sendToParent } from '../../images/image-child.js';
import { readCatalogue } from '../read-catalogue.js';

const send: (reply: CatalogueReply) => Promise<void> = sendToParent;

async function run(message: unknown): Promise<void> {
  let reply: CatalogueReply;
  try {
    reply = { type: 'document', document: await readCatalogue(v.parse(CatalogueRequest, message)) };
  } catch (error) {
    reply = { type: 'failed', ...toFailure(error) };
  }
  await send(reply);
  process.exit(0);
}

// Ctrl-C in a terminal reaches the whole process group; the parent decides what it means.
process.on('SIGINT', () => undefined);
process.on('disconnect', () => process.exit(0));
process.once('message', (message: unknown) => void run(message));
