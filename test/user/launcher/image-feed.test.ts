/**
 * Copying the image into the helper's image FIFO (osascript, UAC): all of it when all is well, a
 * source failure reported (the helper alone would take the early end for the end of the image),
 * and a reader that goes away not mistaken for one. Real processes read the other end.
 */
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { copyImage } from '../../../user/launcher/image-feed.js';

describe('copyImage', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'sluice-test-feed-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('copies an image file, from its descriptor, completely', async () => {
    const bytes = randomBytes(5 * 1024 * 1024 + 3);
    writeFileSync(join(dir, 'image'), bytes);
    const fd = openSync(join(dir, 'image'), 'r');
    // Another process reads the pipe and hashes what it got (Node itself: every OS has it).
    const hashStdin =
      "const h = require('crypto').createHash('sha256'); process.stdin.on('data', (c) => h.update(c)).on('end', () => process.stdout.write(h.digest('hex')))";
    const reader = spawn(process.execPath, ['-e', hashStdin], { stdio: ['pipe', 'pipe', 'inherit'] });
    let out = '';
    reader.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    try {
      expect(await copyImage(fd, reader.stdin)).toBeNull();
      await new Promise((resolve) => reader.on('close', resolve));
      expect(out).toBe(createHash('sha256').update(bytes).digest('hex'));
    } finally {
      closeSync(fd);
    }
  });

  it('reports a source that fails part-way, and closes the reader’s end', async () => {
    let sent = 0;
    const decoder = new Readable({
      read() {
        if (sent >= 3) return this.destroy(new Error('xz: compressed data is corrupt'));
        sent++;
        this.push(Buffer.alloc(65536, 1));
      },
    });
    const reader = spawn('wc', ['-c'], { stdio: ['pipe', 'pipe', 'inherit'] });
    let out = '';
    reader.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));

    const error = await copyImage(decoder, reader.stdin);
    await new Promise((resolve) => reader.on('close', resolve));

    expect(error?.message).toBe('xz: compressed data is corrupt');
    expect(Number(out.trim())).toBeLessThanOrEqual(3 * 65536);
  });

  it('a reader that stops early (a helper cancelled or killed) is not a source failure', async () => {
    writeFileSync(join(dir, 'image'), randomBytes(8 * 1024 * 1024));
    const fd = openSync(join(dir, 'image'), 'r');
    const reader = spawn('head', ['-c', '1000'], { stdio: ['pipe', 'ignore', 'inherit'] });
    try {
      expect(await copyImage(fd, reader.stdin)).toBeNull();
    } finally {
      closeSync(fd);
    }
  });
});
