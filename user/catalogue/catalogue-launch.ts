/**
 * Reading a catalogue in its own process (process/main.ts), for the app's main process and the
 * CLI, under a memory cap and a time limit (limited-child.ts), as images are probed: the JSON of
 * a server Sluice does not control is parsed there, and only its checked answer comes back.
 */
import * as v from 'valibot';
import {
  CatalogueReply,
  MAX_CATALOGUE_DEPTH,
  nestsWithin,
  type CatalogueRequest,
} from '../../common/contracts/catalogue-protocol.js';
import type { CatalogueDocument } from '../../common/domain/catalogue.js';
import { failedReply, jobError, type JobError } from '../../common/domain/failure.js';
import { askLimitedChild, notStarted, type ChildLimits } from '../images/processes/limited-child.js';
import { processEntry } from '../../node/process-entries.js';

const CATALOGUE_ENTRY = processEntry('catalogue');

/**
 * A document is at most 1 MiB; parsed, Raspberry Pi's 60 KB list takes a few MB of heap. 128 MiB
 * of heap and 200 MiB resident leave room for a whole tree of documents read one after the other.
 * Time: each document may take 30 s to download (read-catalogue.ts), and a tree a few of them.
 */
export const CATALOGUE_LIMITS: ChildLimits = { heapMiB: 128, memoryMiB: 200, timeMs: 120_000 };

/** Objects and arrays per level of categories in an answer (a category and its items), and the rest of the frame. */
const MAX_ANSWER_NESTING = 2 * MAX_CATALOGUE_DEPTH + 8;

/** The catalogue process's answer, checked: the document, or the JobError it names. */
export function checkedCatalogue(request: CatalogueRequest, message: unknown): CatalogueDocument | JobError {
  if (!nestsWithin(message, MAX_ANSWER_NESTING))
    return jobError(
      'protocol-error',
      `The catalogue process sent an answer nested deeper than any catalogue of ${MAX_CATALOGUE_DEPTH} levels.`,
    );
  const reply = v.safeParse(CatalogueReply, message);
  if (!reply.success)
    return jobError(
      'protocol-error',
      `The catalogue process sent an answer of the wrong shape: ${v.summarize(reply.issues).slice(0, 500)}`,
    );
  if (reply.output.type === 'document') {
    if (reply.output.document.source !== request.source)
      return jobError(
        'protocol-error',
        `The catalogue process answered about ${reply.output.document.source}, not ${request.source}.`,
      );
    return reply.output.document;
  }
  return failedReply(reply.output);
}

/** Reads `request` in a catalogue process; rejects with a JobError when it cannot be read. */
export function readCatalogueInChild(
  request: CatalogueRequest,
  limits: ChildLimits = CATALOGUE_LIMITS,
): Promise<CatalogueDocument> {
  return askLimitedChild(CATALOGUE_ENTRY, request, limits, (message) => checkedCatalogue(request, message), {
    overLimit: (what) =>
      what === 'time'
        ? jobError(
            'source-read-error',
            `Reading the catalogue ${request.source} took more than ${Math.round(limits.timeMs / 1000)} s, so Sluice stopped.`,
          )
        : jobError(
            'source-corrupt',
            `The catalogue ${request.source} is damaged or hostile: reading it needed more than ${what === 'memory' ? limits.memoryMiB : limits.heapMiB} MiB of memory, so Sluice stopped.`,
          ),
    stopped: (why) =>
      jobError(
        'source-read-error',
        `The catalogue process stopped unexpectedly (${why}); ${request.source} was not read.`,
      ),
    notStarted: notStarted('The catalogue process'),
  });
}
