import { spawn, type ChildProcess } from 'node:child_process';
import { createReadStream, createWriteStream } from 'node:fs';
import type { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  constants as zlibConstants,
  createGunzip,
  createGzip,
  createZstdCompress,
  createZstdDecompress,
} from 'node:zlib';
import { closeFd, readFully, writeFully } from '../../node/io.js';
import { ByteSource } from '../../node/byte-source.js';
import { jobError } from '../../common/domain/failure.js';
import { findTool } from '../../node/run-tool.js';
import { createOsPipe } from '../../node/os-pipe.js';
import { ZLIB_CHUNK } from '../../node/zlib-chunk.js';
import type { BackupCompression } from '../../common/domain/backup-compression.js';

/**
 * How each format is made and read back. gzip and zstd in this process, with node:zlib: the same
 * on every OS (Windows has neither tool), and no slower than the tools on a drive's bytes (zstd
 * level 3 compresses faster than any USB drive reads). zstd's default level is
 * the sweet spot for disks (fast, and empty space costs nothing). xz has no node:zlib codec: its
 * tool, -T0, writes blocks that decode in parallel, as Raspberry Pi OS images do.
 */
const IN_PROCESS: Partial<Record<BackupCompression, { compress: () => Transform; decompress: () => Transform }>> = {
  zstd: {
    compress: () =>
      createZstdCompress({ chunkSize: ZLIB_CHUNK, params: { [zlibConstants.ZSTD_c_compressionLevel]: 3 } }),
    decompress: () => createZstdDecompress({ chunkSize: ZLIB_CHUNK }),
  },
  gz: {
    compress: () => createGzip({ chunkSize: ZLIB_CHUNK, level: 6 }),
    decompress: () => createGunzip({ chunkSize: ZLIB_CHUNK }),
  },
};
const XZ = { tool: 'xz', compress: ['-c', '-T0', '-6'], decompress: ['-dc', '-T0'] };
const SUFFIXES: Record<BackupCompression, string> = { zstd: '.zst', xz: '.xz', gz: '.gz' };

/** The usual file suffix of a format (".zst"), for messages that suggest a name. */
export function compressionSuffix(format: BackupCompression): string {
  return SUFFIXES[format];
}

/** What is written to a compressor lands compressed in its output file. */
export interface Compressor {
  /** Resolves once `bytes` were taken in: the buffer may then be reused. */
  write(bytes: Buffer): Promise<void>;
  /** Ends the input and waits until everything is in the file; rejects with the codec's or the tool's words. */
  finish(): Promise<void>;
  /** Stops it (the job is over or failed). */
  stop(): Promise<void>;
}

/** Decoded bytes of a compressed file, read front to back. */
export interface Decompressor {
  /** Up to `length` decoded bytes into `into`; fewer only at the end. */
  read(into: Buffer, length: number): Promise<number>;
  /** Waits for the end of the decoding; rejects when the file did not decode. */
  finish(): Promise<void>;
  /** Stops it and closes the file. */
  stop(): Promise<void>;
}

function exitOf(child: ChildProcess, tool: string): Promise<void> {
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (text: string) => (stderr = (stderr + text).slice(-2048)));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) =>
      code === 0
        ? resolve()
        : reject(
            new Error(
              `${tool} ${signal !== null ? `was killed by ${signal}` : `exited with code ${String(code)}`}${stderr.trim() ? `: ${stderr.trim()}` : ''}`,
            ),
          ),
    );
  });
}

/**
 * Runs xz between a kernel pipe and `file`: compressing, from the pipe into the backup file, so the
 * compressed bytes never pass through Node; decompressing, from the file into the pipe. Returns
 * this process's end of the pipe, what stops the tool, and its exit.
 */
async function runXz(
  mode: 'compress' | 'decompress',
  file: number,
): Promise<{ fd: number; done: Promise<void>; close: () => Promise<void>; stop: () => Promise<void> }> {
  const path = await findTool(XZ.tool);
  if (path === null) {
    // A decompressor owns the file it reads: closed here too when there is no tool to read it.
    if (mode === 'decompress') await closeFd(file);
    throw jobError(
      'unsupported-format',
      'Compressing a backup as xz needs the xz program, which is not installed. Install it, or choose zstd or gz, which need nothing.',
    );
  }
  const pipe = await createOsPipe();
  const child = spawn(path, XZ[mode], {
    stdio: mode === 'compress' ? [pipe.readFd, file, 'pipe'] : [file, pipe.writeFd, 'pipe'],
  });
  // The tool has its own copies; ours would keep the pipe from ever ending.
  await closeFd(mode === 'compress' ? pipe.readFd : pipe.writeFd);
  if (mode === 'decompress') await closeFd(file);
  const fd = mode === 'compress' ? pipe.writeFd : pipe.readFd;
  const done = exitOf(child, XZ.tool);
  done.catch(() => undefined);
  let closed = false;
  const close = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    await closeFd(fd);
  };
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await close();
  };
  return { fd, done, close, stop };
}

/** A compressor writing into `out` (a descriptor it does not close) from its current position. */
export async function startCompressor(format: BackupCompression, out: number): Promise<Compressor> {
  const codec = IN_PROCESS[format];
  if (codec === undefined) {
    const xz = await runXz('compress', out);
    return {
      write: (bytes) => writeFully(xz.fd, bytes, 0, bytes.length, null),
      finish: async () => {
        await xz.close();
        await xz.done;
      },
      stop: xz.stop,
    };
  }
  const stream = codec.compress();
  const done = pipeline(stream, createWriteStream('', { fd: out, autoClose: false }));
  done.catch(() => undefined);
  return {
    // The callback comes once the codec has consumed the whole chunk, so the caller's buffer is free again.
    write: (bytes) =>
      new Promise((resolve, reject) => stream.write(bytes, (error) => (error ? reject(error) : resolve()))),
    finish: async () => {
      stream.end();
      await done;
    },
    stop: async () => {
      stream.destroy();
      await done.catch(() => undefined);
    },
  };
}

/** A decompressor reading `input` from its start; it owns `input` and closes it. */
export async function startDecompressor(format: BackupCompression, input: number): Promise<Decompressor> {
  const codec = IN_PROCESS[format];
  if (codec === undefined) {
    const xz = await runXz('decompress', input);
    return {
      read: (into, length) => readFully(xz.fd, into, 0, length, null),
      finish: () => xz.done,
      stop: xz.stop,
    };
  }
  const decoder = codec.decompress();
  const done = pipeline(createReadStream('', { fd: input, start: 0, highWaterMark: ZLIB_CHUNK }), decoder);
  done.catch(() => undefined);
  const bytes = new ByteSource(decoder);
  return {
    read: (into, length) => bytes.read(into, length),
    finish: () => done,
    stop: async () => {
      decoder.destroy();
      await done.catch(() => undefined);
    },
  };
}
