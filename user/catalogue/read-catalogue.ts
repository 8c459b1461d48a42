/**
 * Reads a catalogue document from its server or file (in the catalogue process: see
 * catalogue-launch.ts), and with `expand` every document its categories name through subitems_url,
 * down to MAX_DEPTH levels and MAX_CATALOGUE_DOCUMENTS documents. A server that cannot be reached
 * is replaced by the copy saved when it last could be (saved-documents.ts), and the document says so.
 */
import {
  MAX_CATALOGUE_DOCUMENTS,
  MAX_CATALOGUE_NOTES,
  type CatalogueRequest,
} from '../../common/contracts/catalogue-protocol.js';
import type { CatalogueDocument, CatalogueItem } from '../../common/domain/catalogue.js';
import { jobError, JobError } from '../../common/domain/failure.js';
import { AddressRefusedError, HttpStatusError, readBoundedDownload } from '../images/http/http-source.js';
import { readSidecar } from '../images/files/sidecar-file.js';
import { fetchIcons } from './icons.js';
import { isLocalSource, MAX_DOCUMENT_BYTES, parseOsList } from './os-list.js';
import { savedDocument, saveDocument } from './saved-documents.js';

/**
 * A document's whole download: Raspberry Pi's top-level list is about 60 KB, so only a server
 * that stopped answering gets near it.
 */
const DOCUMENT_TIMEOUT_MS = 30_000;

/** A note names a document and an entry; an address can make it long. */
const MAX_NOTE_LENGTH = 2000;

/** Why a catalogue Sluice came with is not read from the local network (CatalogueRequest.localNetwork). */
const PUBLIC_ONLY =
  'a catalogue you did not add yourself may name only addresses on the internet. To use one served on your network, add it in the settings (or name it with --repo).';

/** What one request has learnt so far. */
interface Session {
  savedDir: string | null;
  /** Set when the catalogue may name only addresses on the internet: the reason for a refusal. */
  publicOnly: string | undefined;
  /** Why the network could not be reached, once it could not: the rest is read from saved copies. */
  unreachable: string | null;
  documents: number;
  notes: string[];
  offline: CatalogueDocument['offline'];
}

async function download(source: string, session: Session): Promise<{ bytes: Buffer } | { failed: string }> {
  if (session.unreachable !== null) return { failed: session.unreachable };
  try {
    return {
      bytes: await readBoundedDownload(source, MAX_DOCUMENT_BYTES, DOCUMENT_TIMEOUT_MS, {
        publicOnly: session.publicOnly,
      }),
    };
  } catch (error) {
    // An address refused is no server down: nothing is asked of it, nor read from a saved copy.
    if (error instanceof AddressRefusedError) throw error;
    if (!(error instanceof JobError) || error.failure.code !== 'source-read-error') throw error;
    // A server that answers with an error says nothing about the others; no answer at all does.
    if (!(error instanceof HttpStatusError)) session.unreachable = error.message;
    return { failed: error.message };
  }
}

/** One document, from its file, its server, or the copy saved when the server last answered. */
async function readOne(source: string, depth: number, session: Session): Promise<CatalogueDocument> {
  session.documents += 1;
  if (isLocalSource(source)) {
    const bytes = await readSidecar(source, MAX_DOCUMENT_BYTES, `The catalogue ${source}`);
    if (bytes === null) throw jobError('source-not-found', `The catalogue ${source} does not exist.`);
    return { ...parseOsList(bytes, { source, depth }), offline: null };
  }
  const fetched = await download(source, session);
  if ('bytes' in fetched) {
    const document = parseOsList(fetched.bytes, { source, depth });
    // Only a document that could be read is kept for later.
    if (session.savedDir !== null) await saveDocument(session.savedDir, source, fetched.bytes);
    return { ...document, offline: null };
  }
  const saved = session.savedDir === null ? null : await savedDocument(session.savedDir, source);
  if (saved === null)
    throw jobError('source-read-error', `${fetched.failed} No copy of this catalogue was saved for use offline.`);
  return {
    ...parseOsList(saved.bytes, { source, depth }),
    offline: { savedAt: saved.savedAt, reason: fetched.failed },
  };
}

/** `items` with every category's subitems_url read, each document's notes and offline state kept in `session`. */
async function expandItems(items: readonly CatalogueItem[], depth: number, session: Session): Promise<CatalogueItem[]> {
  const out: CatalogueItem[] = [];
  for (const item of items) {
    if (item.kind === 'os') {
      out.push(item);
      continue;
    }
    let inside = item.items;
    if (inside === null && item.subitemsUrl !== null) {
      if (session.documents >= MAX_CATALOGUE_DOCUMENTS) {
        session.notes.push(
          `"${item.name}" was not read: the catalogue names more than ${MAX_CATALOGUE_DOCUMENTS} documents.`,
        );
      } else {
        try {
          const document = await readOne(item.subitemsUrl, depth + 1, session);
          session.notes.push(...document.notes);
          session.offline ??= document.offline;
          inside = document.items;
        } catch (error) {
          if (!(error instanceof JobError)) throw error;
          session.notes.push(`"${item.name}" could not be read: ${error.message}`);
        }
      }
    }
    out.push({ ...item, items: inside === null ? null : await expandItems(inside, depth + 1, session) });
  }
  return out;
}

/** The notes as the protocol carries them: MAX_CATALOGUE_NOTES at most, each of a readable length. */
function capped(notes: readonly string[]): string[] {
  const kept =
    notes.length <= MAX_CATALOGUE_NOTES
      ? notes
      : [...notes.slice(0, MAX_CATALOGUE_NOTES - 1), `… and ${notes.length - MAX_CATALOGUE_NOTES + 1} more notes.`];
  return kept.map((note) => (note.length > MAX_NOTE_LENGTH ? `${note.slice(0, MAX_NOTE_LENGTH - 1)}…` : note));
}

/** Reads what `request` asks for, and fetches its icons when asked to. Throws a JobError when the document itself cannot be read. */
export async function readCatalogue(request: CatalogueRequest): Promise<CatalogueDocument> {
  const session: Session = {
    savedDir: request.savedDir,
    publicOnly: request.localNetwork ? undefined : PUBLIC_ONLY,
    unreachable: null,
    documents: 0,
    notes: [],
    offline: null,
  };
  let document = await readOne(request.source, request.depth, session);
  if (request.expand) {
    session.offline = document.offline;
    const items = await expandItems(document.items, request.depth, session);
    document = { ...document, items, notes: [...document.notes, ...session.notes], offline: session.offline };
  }
  // Offline, the icons are those fetched before: the network is not tried again for each.
  if (request.iconsDir !== undefined && request.iconsDir !== null && session.unreachable === null) {
    const refused = await fetchIcons(document, request.iconsDir, session.publicOnly);
    document = { ...document, notes: [...document.notes, ...refused] };
  }
  return { ...document, notes: capped(document.notes) };
}
