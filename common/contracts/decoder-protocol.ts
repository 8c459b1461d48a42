import type { Failure } from '../domain/failure.js';
import type { SkipReason } from '../domain/skipped.js';
import type { ImageFormat } from '../domain/image-format.js';

/** Where the image's bytes come from, as the user named it. */
export type SourceLocation = { kind: 'file'; path: string } | { kind: 'url'; url: string };

/** A range of a block map with the checksum its bytes must have (bmap 2.0: SHA-256, 1.x: SHA-1). */
export interface MappedRange {
  offset: number;
  length: number;
  /** Hex digest of the range's bytes, or null when the map gives none. */
  digest: string | null;
}

/** The block map a decoder applies: which decoded bytes to send, and what to check. */
export interface DecodeMap {
  /** Ranges sent to the helper: the map's ranges, aligned and merged (stream-layout.ts). */
  extents: [number, number][];
  /** The map's own ranges, each checked against its digest as it passes. */
  ranges: MappedRange[];
  digestAlgorithm: 'sha256' | 'sha1';
  /** The map file, for messages. */
  name: string;
}

/** Where a zip entry's compressed bytes are and how to decode them (zip-directory.ts). */
export interface ZipEntryPlan {
  name: string;
  /** Offset of the entry's compressed data in the archive (after its local header). */
  dataOffset: number;
  compressedSize: number;
  uncompressedSize: number;
  /** 0 stored, 8 deflate. */
  method: number;
  crc32: number;
}

/**
 * A download saved into the image cache as it is read (user/images/http/download.ts): appended to
 * `partial`, which a later try resumes from, and renamed to `complete` once its checks passed.
 */
export interface DownloadTee {
  partial: string;
  complete: string;
}

/**
 * Everything the decoder process needs to turn a source into image bytes on its fd 3. Made by
 * the parent (user/images/probe/probe.ts), which has already probed the source.
 */
export interface DecodePlan {
  location: SourceLocation;
  format: ImageFormat;
  /** Decoded image size when the format records it; checked against what the decoder produces. */
  imageSize: number | null;
  /** Hex SHA-256 the source bytes (as read, before decoding) must have. */
  sha256: string | null;
  /** Where the SHA-256 came from, for the mismatch message ("--sha256", "image.img.xz.sha256"). */
  sha256From: string | null;
  map: DecodeMap | null;
  zipEntry: ZipEntryPlan | null;
  /**
   * Send the decoded image to fd 3. Off for an image file the helper reads itself, where the
   * decoder only checks the file's SHA-256 alongside.
   */
  sendImage: boolean;
  /**
   * Use the system's own decompressors (xz, zstd, lbzip2/bzip2) where present and faster; off,
   * everything is decoded in-process, as on a system without them.
   */
  systemTools: boolean;
  /**
   * Read the filesystems as the image streams past and leave their free space out of what is sent
   * (skip messages, each acknowledged before the stream goes on): off with --exact, and for images
   * whose free space the probe already found (read in place).
   */
  freeSpace: boolean;
  /** Hex SHA-256 the decoded image must have (a catalogue's extract_sha256); absent or null when none is known. */
  imageSha256?: string | null;
  /** A download to save into the image cache as it is read; absent or null for none. */
  tee?: DownloadTee | null;
}

/** Decoder → parent: how far it got reading the source (throttled), and how it ended. */
export type DecoderMessage =
  /** `queued`: source bytes read but not yet decoded (input.ts SourceInput.queued). */
  | { type: 'progress'; sourceBytes: number; queued: number }
  | { type: 'started'; decoder: string }
  /** Something the person flashing should know that is not a failure (a dropped connection resumed). */
  | { type: 'notice'; message: string }
  | { type: 'end'; ok: true; bytes: number | null; sha256: string | null }
  | ({ type: 'end'; ok: false } & Failure)
  /** The helper stopped reading (it failed or was cancelled): its result is the one that counts. */
  | { type: 'abandoned' }
  /**
   * From the next byte on, the stream leaves out these image ranges (free space, all of it ahead);
   * the decoder sends nothing more until the parent answers SkipAck, once the helper has them.
   */
  | { type: 'skip'; extents: [number, number][]; reason: SkipReason };

/** Parent → decoder, after the plan: the last skip is in place where the image goes. */
export interface SkipAck {
  type: 'skip-ack';
}
