/**
 * The probe process's protocol (user/images/probe/main.ts): the parent sends one ImageRequest over
 * the IPC channel, the probe answers with the prepared image or the failure, and exits. The probe
 * has just read a file from the internet with its parsers, so whatever it sends is checked here on
 * arrival before the app or the CLI uses any of it: a probe that a hostile image got the better of
 * can send nothing but an image's description of honest shape and size.
 */
import * as v from 'valibot';
import { INIT_FORMATS } from '../domain/catalogue.js';
import { CUSTOMISATION_METHODS, CustomisationSchema, MAX_OVERLAY_BYTES } from '../domain/customisation.js';
import { FailureSchema } from '../domain/failure.js';
import { IMAGE_FORMATS } from '../domain/image-format.js';
import { ByteCount } from '../domain/wire.js';
import { MAX_EFI_LOADERS } from '../domain/image.js';
import { FreeSpaceReasonSchema } from '../domain/skipped.js';
import { MAX_EXTENTS, MAX_SKIPPED_RANGES, MAX_TARGETS } from './helper-protocol.js';

/** A path, a URL, a file or entry name, a partition's type or label. */
const Text = v.pipe(v.string(), v.maxLength(4096));
const OptionalText = v.nullable(Text);
const Sha256 = v.pipe(v.string(), v.regex(/^[0-9a-fA-F]{64}$/));
/** A block map's range digest, as bmap.ts takes it (checked against the bytes by the decoder). */
const Hex = v.pipe(v.string(), v.regex(/^[0-9a-fA-F]{1,128}$/));
/** A GPT holds at most 256 entries as partition-table.ts reads it; an MBR 4. */
const MAX_PARTITIONS = 256;
/**
 * A block map's own ranges: a bmap file is at most 16 MiB (bmap-size.ts MAX_BMAP_BYTES) and a range
 * takes at least 16 bytes of it (`<Range>0</Range>`).
 */
const MAX_MAP_RANGES = (16 * 1024 * 1024) / 16;

const Extents = v.pipe(v.array(v.tuple([ByteCount, ByteCount])), v.maxLength(MAX_EXTENTS));

/** Parent → probe: what to probe (user/images/probe/probe.ts ImageRequest). */
export const ProbeRequest = v.strictObject({
  image: v.pipe(Text, v.minLength(1)),
  sha256: v.optional(Text),
  bmap: v.optional(v.union([Text, v.literal(false)])),
  systemTools: v.optional(v.boolean()),
  partitions: v.optional(v.boolean()),
  detect: v.optional(v.boolean()),
  customise: v.optional(v.pipe(v.array(CustomisationSchema), v.minLength(1), v.maxLength(MAX_TARGETS))),
  initFormat: v.optional(v.nullable(v.picklist(INIT_FORMATS))),
});

const PartitionTableSchema = v.strictObject({
  type: v.picklist(['gpt', 'mbr', 'none']),
  partitions: v.pipe(
    v.array(
      v.strictObject({
        number: v.pipe(v.number(), v.integer(), v.minValue(1)),
        offset: ByteCount,
        size: ByteCount,
        type: Text,
        label: OptionalText,
      }),
    ),
    v.maxLength(MAX_PARTITIONS),
  ),
});

/** common/domain/image.ts ImageInfo, as a probe of a file or a download makes it (never a drive). */
const ImageInfoSchema = v.strictObject({
  source: Text,
  name: Text,
  origin: v.picklist(['file', 'url']),
  format: v.picklist(IMAGE_FORMATS),
  sourceSize: v.nullable(ByteCount),
  size: v.nullable(ByteCount),
  sizeExact: v.boolean(),
  partitionTable: v.nullable(PartitionTableSchema),
  disc: v.nullable(
    v.strictObject({
      kind: v.picklist(['hybrid', 'non-hybrid', 'windows', 'not-bootable']),
      filesystem: v.picklist(['iso9660', 'udf']),
      elTorito: v.boolean(),
      efiLoaders: v.pipe(v.array(Text), v.maxLength(MAX_EFI_LOADERS)),
      problem: OptionalText,
    }),
  ),
  entry: v.nullable(v.strictObject({ name: Text, choice: OptionalText })),
  blockMap: v.nullable(v.strictObject({ from: Text, mappedBytes: ByteCount, ranges: ByteCount })),
  checksum: v.nullable(v.strictObject({ sha256: Sha256, from: Text })),
  customisation: v.nullable(v.picklist(CUSTOMISATION_METHODS)),
  customisationNote: OptionalText,
});

/** Base64 of at most MAX_OVERLAY_BYTES. */
const Base64 = v.pipe(v.string(), v.maxLength(Math.ceil(MAX_OVERLAY_BYTES / 3) * 4), v.regex(/^[A-Za-z0-9+/]*={0,2}$/));
/** A card's ranges: each FAT copy, directory and file piece is one; a boot partition's whole FAT in single clusters is far below this. */
export const MAX_OVERLAY_RANGES = 4096;

/** common/domain/customisation.ts PreparedCustomisation. */
const PreparedCustomisationSchema = v.strictObject({
  method: v.picklist(CUSTOMISATION_METHODS),
  why: Text,
  files: v.pipe(
    v.array(v.pipe(v.array(v.strictObject({ name: Text, size: ByteCount })), v.maxLength(16))),
    v.maxLength(MAX_TARGETS),
  ),
  overlays: v.pipe(
    v.array(v.pipe(v.array(v.tuple([ByteCount, Base64])), v.maxLength(MAX_OVERLAY_RANGES))),
    v.minLength(1),
    v.maxLength(MAX_TARGETS),
  ),
});

/** common/contracts/decoder-protocol.ts DecodePlan. */
const DecodePlanSchema = v.strictObject({
  location: v.variant('kind', [
    v.strictObject({ kind: v.literal('file'), path: Text }),
    v.strictObject({ kind: v.literal('url'), url: Text }),
  ]),
  format: v.picklist(IMAGE_FORMATS),
  imageSize: v.nullable(ByteCount),
  sha256: v.nullable(Sha256),
  sha256From: OptionalText,
  map: v.nullable(
    v.strictObject({
      extents: Extents,
      ranges: v.pipe(
        v.array(v.strictObject({ offset: ByteCount, length: ByteCount, digest: v.nullable(Hex) })),
        v.maxLength(MAX_MAP_RANGES),
      ),
      digestAlgorithm: v.picklist(['sha256', 'sha1']),
      name: Text,
    }),
  ),
  zipEntry: v.nullable(
    v.strictObject({
      name: Text,
      dataOffset: ByteCount,
      compressedSize: ByteCount,
      uncompressedSize: ByteCount,
      /** Stored or deflated: the only methods zip-directory.ts plans. */
      method: v.pipe(
        v.number(),
        v.check((method) => method === 0 || method === 8),
      ),
      crc32: v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(0xffffffff)),
    }),
  ),
  sendImage: v.boolean(),
  systemTools: v.boolean(),
  freeSpace: v.boolean(),
});

/** user/images/probe/probe.ts PreparedImage. */
const PreparedImageSchema = v.strictObject({
  info: ImageInfoSchema,
  plan: DecodePlanSchema,
  direct: v.boolean(),
  imageSize: v.nullable(ByteCount),
  extents: v.nullable(Extents),
  freeSpace: v.nullable(
    v.pipe(
      v.array(
        v.strictObject({
          reason: FreeSpaceReasonSchema,
          extents: v.pipe(
            v.array(v.pipe(v.tuple([ByteCount, ByteCount]), v.readonly())),
            v.maxLength(MAX_SKIPPED_RANGES),
          ),
        }),
      ),
      v.maxLength(MAX_PARTITIONS),
    ),
  ),
  identity: v.nullable(v.strictObject({ dev: v.number(), ino: v.number(), size: ByteCount, mtimeMs: v.number() })),
  customisation: v.nullable(PreparedCustomisationSchema),
});

/** Probe → parent, its one message: the image, prepared, or why it cannot be used. */
export const ProbeReply = v.variant('type', [
  v.strictObject({ type: v.literal('prepared'), prepared: PreparedImageSchema }),
  v.strictObject({ type: v.literal('failed'), ...FailureSchema.entries }),
]);
export type ProbeReply = v.InferOutput<typeof ProbeReply>;
