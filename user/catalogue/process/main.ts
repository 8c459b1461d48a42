/**
 * The catalogue process: reads an OS catalogue (read-catalogue.ts) away from the app and the CLI,
 * so that JSON from a server is parsed where running out of memory or never finishing takes only
 * this process down (catalogue-launch.ts gives it its memory cap and its time). It runs with the
 * user's rights. The parent sends one CatalogueRequest over the IPC channel; this answers with
 * exactly one CatalogueReply (common/contracts/catalogue-protocol.ts) and exits.
 */
import * as v from 'valibot';
import { CatalogueRequest, type CatalogueReply } from '../../../common/contracts/catalogue-protocol.js';
import { answerOnce } from '../../images/processes/image-child.js';
import { readCatalogue } from '../read-catalogue.js';

answerOnce(async (message): Promise<CatalogueReply> => ({
  type: 'document',
  document: await readCatalogue(v.parse(CatalogueRequest, message)),
}));
