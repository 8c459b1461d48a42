import { spawn, type ChildProcess } from 'node:child_process';
import { closeFd } from '../../node/io.js';
import { jobError } from '../../common/domain/failure.js';
import { findTool } from '../../node/run-tool.js';
import { createOsPipe } from '../../node/os-pipe.js';
import type { BackupCompression } from '../../common/domain/backup-compression.js';

/**
 * How each format is made and read back. zstd's default level on all cores is the sweet spot for
 * disks (fast, and empty space costs nothing); xz -T0 writes blocks that decode in parallel, as
 * Raspberry Pi OS images do; gzip is for tools that know nothing else.
 */
const TOOLS: Record<BackupCompression, { tool: string; compress: string[]; decompress: string[]; suffix: string }> = {
  zstd: { tool: 'zstd', compress: ['-q', '-c', '-T0', '-3'], decompress: ['-q', '-dc'], suffix: '.zst' },
  xz: { tool: 'xz', compress: ['-c', '-T0', '-6'], decompress: ['-dc', '-T0'], suffix: '.xz' },
  gz: { tool: 'gzip', compress: ['-c', '-6'], decompress: ['-dc'], suffix: '.gz' },
};

/** The usual file suffix of a format (".zst"), for messages that suggest a name. */
export function compressionSuffix(format: BackupCompression): string {
  return TOOLS[format].suffix;
}

/** A system tool running from one descriptor into another. */
export interface RunningTool {
  /** The descriptor this process writes the tool's input to (compressing), or reads its output from (decompressing). */
  readonly fd: number;
  /**
   * Closes this process's descriptor (for a compressor: the end of its input) and waits for the
   * tool to exit; rejects with the tool's own words when it failed.
   */
  finish(): Promise<void>;
  /** Stops the tool (the job is over or failed) and closes this process's descriptor. */
  stop(): Promise<void>;
}

function exitOf(child: ChildProcess, tool: string): Promise<void> {
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (text: string) => (stderr = (stderr + text).slice(-2048)));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => (code === 0 ? resolve() : reject(new Error(`${tool} ${signal !== null ? `was killed by ${signal}` : `exited with code ${String(code)}`}${stderr.trim() ? `: ${stderr.trim()}` : ''}`))));
  });
}

async function requireTool(format: BackupCompression): Promise<string> {
  const { tool } = TOOLS[format];
  const path = await findTool(tool);
  if (path === null) throw jobError('unsupported-format', `Compressing a backup as ${format} needs the ${tool} program, which is not installed. Install it, or back up uncompressed.`);
  return path;
}

/**
 * Runs the format's tool between a kernel pipe and `other`, a file: compressing, from the pipe
 * into the backup file, so the compressed bytes never pass through Node; decompressing, from the
 * file into the pipe. The returned `fd` is this process's end of the pipe.
 */
async function runTool(format: BackupCompression, mode: 'compress' | 'decompress', other: number): Promise<RunningTool> {
  const path = await requireTool(format);
  const pipe = await createOsPipe();
  const child = spawn(path, TOOLS[format][mode], { stdio: mode === 'compress' ? [pipe.readFd, other, 'pipe'] : [other, pipe.writeFd, 'pipe'] });
  // The tool has its own copy; ours would keep the pipe from ever ending.
  await closeFd(mode === 'compress' ? pipe.readFd : pipe.writeFd);
  const fd = mode === 'compress' ? pipe.writeFd : pipe.readFd;
  const done = exitOf(child, TOOLS[format].tool);
  done.catch(() => undefined);
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await closeFd(fd);
  };
  return {
    fd,
    finish: async () => {
      await close();
      await done;
    },
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await close();
    },
  };
}

/** A compressor writing into `out`: what is written to its `fd` is compressed. */
export function startCompressor(format: BackupCompression, out: number): Promise<RunningTool> {
  return runTool(format, 'compress', out);
}

/** A decompressor reading `input`; the decoded bytes are read from its `fd`. */
export function startDecompressor(format: BackupCompression, input: number): Promise<RunningTool> {
  return runTool(format, 'decompress', input);
}
