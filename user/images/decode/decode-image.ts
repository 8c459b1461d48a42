import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { pipeline, finished } from 'node:stream/promises';
import { ImageSink } from './image-sink.js';
import { openInput, SOURCE_CHUNK, type SourceInput } from './input.js';
import type { DecodePlan } from '../../../common/contracts/decoder-protocol.js';
import { jobError } from '../../../common/domain/failure.js';
import { runDecoderTool, systemDecoder, type ToolCommand } from './system-tool.js';
import type { SkipReason } from '../../../common/domain/skipped.js';
import { StreamFreeSpace } from '../free-space/stream-free-space.js';
import { mergeExtents, type Extent } from '../../../common/domain/extents.js';
import { loadPart } from './load-part.js';

/** What the decoder did, for its end message. */
export interface Decoded {
  /** Bytes sent to the helper; null when a system tool wrote them straight to the pipe uncounted. */
  bytes: number | null;
  /** SHA-256 of the source when it was hashed on the way (downloads). */
  sourceDigest: string | null;
  /** SHA-256 of the decoded image, when the plan gives one to check (imageSha256). */
  imageDigest: string | null;
}

/** Reports from the decoder as it runs. */
export interface DecodeEvents {
  /** Which decoder runs ("node:zlib gunzip", "xz -dc -T2 … (system)"). */
  started(decoder: string): void;
  input(input: SourceInput): void;
  /** The stream leaves out `extents` from here on (see ImageSink); resolves once the helper has them. */
  skip(extents: [number, number][], reason: SkipReason): Promise<void>;
  /** Something to tell the person flashing (a download resumed). */
  notice(message: string): void;
}

/** SHA-256 of a whole file, read on its own alongside the decoding. */
export async function hashFile(path: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(path, { highWaterMark: SOURCE_CHUNK }), hash);
  return hash.digest('hex');
}

/** Runs a system tool on the source; straight from the file into the pipe when nothing needs to see the bytes. */
async function viaTool(
  tool: ToolCommand,
  plan: DecodePlan,
  outFd: number,
  sink: ImageSink,
  events: DecodeEvents,
): Promise<Decoded> {
  events.started(tool.label);
  if (plan.location.kind === 'file' && plan.map === null && !plan.freeSpace && !sink.hashing) {
    const file = await open(plan.location.path, 'r');
    try {
      await runDecoderTool(tool, plan.format, file.fd, outFd);
    } finally {
      await file.close();
    }
    return { bytes: null, sourceDigest: null, imageDigest: null };
  }
  const input = await openSourceInput(plan, sink, events);
  events.input(input);
  await runDecoderTool(tool, plan.format, input, sink);
  sink.end();
  await finished(sink);
  return { bytes: sink.sent, sourceDigest: input.digest(), imageDigest: sink.digest() };
}

/** The source as a stream, carrying the ranges `sink` expects; a download is hashed on the way when a checksum is expected. */
function openSourceInput(plan: DecodePlan, sink: ImageSink, events: DecodeEvents): Promise<SourceInput> {
  const entry = plan.zipEntry;
  return openInput(plan.location, {
    hash: plan.sha256 !== null && plan.location.kind === 'url',
    ...(entry === null ? {} : zipDataRange(entry)),
    ranges: sink.layout,
    tee: plan.tee,
    notice: events.notice,
  });
}

/**
 * The only ranges of a local raw image that are read when a map says what is sent: those it sends
 * and those whose digests it checks; null when every byte is needed (an image hash, free space
 * found on the way, a stream). A board image's map often covers a fraction of it, and reading the
 * rest only to drop it cost time at the end of the flash: the bench's 1 GiB OS-like image maps
 * 524 MB, and the 446 MB of holes after its last large range took 0.17 s to read before its last
 * bytes reached the card.
 */
function rangesReadInPlace(plan: DecodePlan): Extent[] | null {
  if (
    plan.format !== 'raw' ||
    plan.location.kind !== 'file' ||
    plan.map === null ||
    plan.freeSpace ||
    (plan.imageSha256 ?? null) !== null
  )
    return null;
  return mergeExtents([...plan.map.extents, ...plan.map.ranges.map((r): Extent => [r.offset, r.length])]);
}

function zipDataRange(entry: NonNullable<DecodePlan['zipEntry']>): { start: number; end: number } {
  return { start: entry.dataOffset, end: entry.dataOffset + entry.compressedSize };
}

/** The zlib-based decoders (gzip, zstd, zip's deflate), loaded for those formats only. */
const zlibDecoders = () => loadPart('zlib decoders', () => import('./in-process.js'));

/** Runs an in-process decoder from the source stream into the sink; `load` gets it ready before anything starts. */
async function inProcess(
  name: string,
  plan: DecodePlan,
  sink: ImageSink,
  events: DecodeEvents,
  load: () => Promise<(input: SourceInput) => Promise<void>>,
): Promise<Decoded> {
  const decode = await load();
  events.started(name);
  const input = await openSourceInput(plan, sink, events);
  events.input(input);
  await decode(input);
  return { bytes: sink.sent, sourceDigest: input.digest(), imageDigest: sink.digest() };
}

/** Runs a decoder that reads the image file out of order itself (qcow2, dmg): local files only. */
async function fromLocalFile(
  kind: string,
  name: string,
  plan: DecodePlan,
  sink: ImageSink,
  events: DecodeEvents,
  load: () => Promise<(path: string, sink: ImageSink) => Promise<void>>,
): Promise<Decoded> {
  if (plan.location.kind !== 'file') throw jobError('unsupported-format', `${kind} images must be local files.`);
  const decode = await load();
  events.started(name);
  await decode(plan.location.path, sink);
  return { bytes: sink.sent, sourceDigest: null, imageDigest: sink.digest() };
}

/**
 * Decodes the source into `outFd` (what the helper reads, see decoder-launch.ts DecoderOutput),
 * the fastest way this system offers. Each decoder's module is loaded when its format comes: the
 * decoder process starts before the first image byte can flow, and loading all of them (udif for
 * dmg, the WebAssembly xz, zlib's, the download's http and tls) up front would double the time
 * it takes to import this module.
 */
export async function decodeImage(plan: DecodePlan, outFd: number, events: DecodeEvents): Promise<Decoded> {
  const skipping = plan.freeSpace
    ? {
        found: new StreamFreeSpace(plan.imageSize),
        announce: (extents: [number, number][], reason: SkipReason) => events.skip(extents, reason),
      }
    : null;
  const sink = new ImageSink(
    outFd,
    plan.imageSize,
    plan.map,
    plan.format,
    skipping,
    (plan.imageSha256 ?? null) !== null,
    rangesReadInPlace(plan),
  );
  const tool =
    plan.systemTools && (plan.format === 'xz' || plan.format === 'zstd' || plan.format === 'bzip2')
      ? await systemDecoder(plan.format)
      : null;
  if (tool !== null) return viaTool(tool, plan, outFd, sink, events);
  switch (plan.format) {
    case 'raw':
      return inProcess(
        plan.map === null ? 'copy' : 'copy of the mapped ranges',
        plan,
        sink,
        events,
        async () => (input) => pipeline(input.stream, sink),
      );
    case 'gzip':
      return inProcess('node:zlib gunzip', plan, sink, events, async () => {
        const { gunzip } = await zlibDecoders();
        return (input) => gunzip(input.stream, sink);
      });
    case 'zstd':
      return inProcess('node:zlib zstd, frame by frame', plan, sink, events, async () => {
        const { unzstd } = await zlibDecoders();
        return (input) => unzstd(input.stream, sink);
      });
    case 'xz':
      return inProcess('xz-decompress (WebAssembly)', plan, sink, events, async () => {
        const { unxz } = await loadPart('WebAssembly xz decoder', () => import('./xz-in-process.js'));
        return (input) => unxz(input.stream, sink);
      });
    case 'zip': {
      const entry = plan.zipEntry;
      if (entry === null) throw jobError('unsupported-format', 'No zip entry was chosen to decode.');
      return inProcess(entry.method === 0 ? 'zip (stored)' : 'node:zlib inflateRaw', plan, sink, events, async () => {
        const { unzipEntry } = await zlibDecoders();
        return (input) => unzipEntry(input.stream, sink, entry.method, entry.crc32, entry.name);
      });
    }
    case 'bzip2':
      throw jobError('unsupported-format', 'bzip2 images need lbzip2 or bzip2 on this computer.');
    case 'qcow2':
      return fromLocalFile(
        'qcow2',
        'qcow2, clusters decoded in parallel',
        plan,
        sink,
        events,
        async () => (await loadPart('qcow2 decoder', () => import('./qcow2-decode.js'))).decodeQcow2,
      );
    case 'dmg':
      return fromLocalFile(
        'dmg',
        '@balena/udif',
        plan,
        sink,
        events,
        async () => (await loadPart('dmg decoder', () => import('./dmg-decode.js'))).decodeDmg,
      );
  }
}
