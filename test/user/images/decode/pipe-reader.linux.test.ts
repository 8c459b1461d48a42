import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { MiB } from '../../../../common/domain/units.js';
import { createOsPipe } from '../../../../node/os-pipe.js';
import { builtDrainPipe } from '../../../support/built-modules.js';
import { cleanupLoops, scratchDir, writeRandomFile } from '../../../support/loop-device.js';

afterAll(() => cleanupLoops());

/** `dd` writing `file` into a fresh pipe in 8 KiB pieces, as xz does; resolves with its exit code. */
async function writerOf(file: string): Promise<{ readFd: number; exited: Promise<number | null> }> {
  const pipe = await createOsPipe();
  const child = spawn('dd', [`if=${file}`, 'bs=8k', 'status=none'], { stdio: ['ignore', pipe.writeFd, 'inherit'] });
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  const { closeSync } = await import('node:fs');
  closeSync(pipe.writeFd);
  return { readFd: pipe.readFd, exited };
}

describe('drainPipe', () => {
  it('hands on everything a tool writes, in order, a MiB at a time (the last piece shorter)', async () => {
    const drainPipe = await builtDrainPipe();
    const file = join(scratchDir(), 'bytes');
    const size = 9 * MiB + 12345;
    writeRandomFile(file, size);
    const { readFd, exited } = await writerOf(file);
    const pieces: Buffer[] = [];
    // The pieces are views of reused memory: a sink that keeps them copies them.
    const sink = new Writable({
      write: (chunk: Buffer, _encoding, callback) => (pieces.push(Buffer.from(chunk)), callback()),
    });
    await drainPipe(readFd, sink);
    expect(await exited).toBe(0);
    expect(Buffer.concat(pieces).equals(readFileSync(file))).toBe(true);
    expect(pieces.map((p) => p.length)).toEqual([...Array<number>(9).fill(MiB), 12345]);
  });

  it("rejects with the sink's error, and reads the pipe to its end so that the tool is not left blocked", async () => {
    const drainPipe = await builtDrainPipe();
    const file = join(scratchDir(), 'bytes');
    writeRandomFile(file, 32 * MiB);
    const { readFd, exited } = await writerOf(file);
    let taken = 0;
    const sink = new Writable({
      write: (_chunk: Buffer, _encoding, callback) => {
        taken += 1;
        callback(taken === 2 ? new Error('the helper went away') : null);
      },
    });
    await expect(drainPipe(readFd, sink)).rejects.toThrow('the helper went away');
    // 32 MiB is far more than the pipe and the reader's slots hold: dd ends only if it is read to the end.
    expect(await exited).toBe(0);
    expect(taken).toBe(2);
  });
});
