import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ReaderGone, type ImageSink } from './image-sink.js';
import { DecodedBytes } from './in-process.js';
import { jobError, JobError } from '../../../common/domain/failure.js';
import { errorText } from '../../../common/domain/error-details.js';

/** xz-embedded's return codes (xz.h), as xz-decompress reports them: "… failed with error code N". */
const XZ_ERRORS: Record<number, { code: 'source-corrupt' | 'source-truncated' | 'unsupported-format'; what: string }> =
  {
    2: { code: 'unsupported-format', what: 'it uses an integrity check this decoder does not know' },
    3: { code: 'source-corrupt', what: 'the decoder ran out of memory' },
    4: { code: 'unsupported-format', what: 'its dictionary is larger than the decoder allows' },
    5: { code: 'source-corrupt', what: 'it is not xz data' },
    6: { code: 'unsupported-format', what: 'it uses filters or options this decoder does not support' },
    7: { code: 'source-corrupt', what: 'the compressed data is corrupt (a block or its CRC does not check out)' },
    8: { code: 'source-truncated', what: 'it ends too early: the file is truncated (an incomplete download?)' },
  };

/**
 * xz without the system's xz tool (Windows, a Mac without Homebrew): xz-decompress, the
 * xz-embedded decoder compiled to WebAssembly, so it runs wherever Node or Electron does with no
 * native module to install. It checks every block's CRC32/CRC64 and reads multi-stream files.
 * It decodes faster than SD cards write, though slower than `xz -dc -T1`; @napi-rs/lzma's platform
 * binaries are skipped by npm under Node < 22, and lzma-native (etcher-sdk's) is slower still.
 */
export async function unxz(input: Readable, sink: ImageSink): Promise<void> {
  // A CommonJS module, loaded only when needed: most systems decode xz with the xz tool.
  const { XzReadableStream } = (await import('xz-decompress')).default;
  const decoded = new DecodedBytes();
  const output = decoded.watch(
    Readable.fromWeb(new XzReadableStream(Readable.toWeb(input) as ReadableStream<Uint8Array>) as never),
  );
  await pipeline(output, sink).catch((error: unknown) => {
    if (error instanceof JobError || error instanceof ReaderGone) throw error;
    const at = decoded.count;
    const known = XZ_ERRORS[Number(/error code (\d+)/.exec(errorText(error))?.[1])];
    if (known === undefined)
      throw jobError('source-corrupt', `The xz data could not be decoded at image byte ${at}: ${errorText(error)}.`, {
        offset: at,
      });
    throw jobError(known.code, `The xz data cannot be decoded at image byte ${at}: ${known.what}.`, { offset: at });
  });
}
