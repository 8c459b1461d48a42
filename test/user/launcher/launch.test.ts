/**
 * The app's side of a job when the other side misbehaves or never starts. A real helper cannot be
 * made to send garbage, so a few lines of Node stand in for a broken one; nothing here opens a device.
 */
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { pkexecLaunch } from '../../../user/launcher/elevation/pkexec.js';
import { encodeFrame } from '../../../node/framing.js';
import type { HelperJob } from '../../../common/contracts/helper-protocol.js';
import { startHelper } from '../../../user/launcher/launch.js';

const START: HelperJob = {
  kind: 'flash',
  targets: ['/nonexistent/sluice-launch-test'],
  imageSize: 0,
  sourceSeekable: true,
  verify: true,
};

describe('the app side of a helper job', () => {
  it('a channel path with a newline (from TMPDIR) is refused before anyone is asked for a password', async () => {
    const odd = mkdtempSync(join(tmpdir(), 'sluice-test-'));
    const withNewline = join(odd, 'a\nAuthentication is not required');
    mkdirSync(withNewline);
    const saved = process.env['TMPDIR'];
    process.env['TMPDIR'] = withNewline;
    let asked = false;
    const image = openSync('/dev/null', 'r');
    try {
      const elevation = {
        ...pkexecLaunch,
        command: (program: string, args: readonly string[]) => ((asked = true), { file: program, args: [...args] }),
      };
      const job = startHelper({
        source: image,
        job: START,
        elevation,
        program: { file: '/usr/bin/true', args: [], env: {} },
      });
      expect(await job.result).toEqual([
        expect.objectContaining({
          status: 'failed',
          code: 'helper-died',
          message: expect.stringContaining('--channel has a control character in it'),
        }),
      ]);
      expect(asked).toBe(false);
    } finally {
      if (saved === undefined) delete process.env['TMPDIR'];
      else process.env['TMPDIR'] = saved;
      closeSync(image);
      rmSync(odd, { recursive: true, force: true });
    }
  });

  it('a helper that sends an invalid message: protocol-error, and the helper is told to stop', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-test-'));
    const marker = join(dir, 'got-cancel');
    // A broken helper: says ready, then a progress report with a phase that does not exist, then
    // waits for the app's cancel and records that it came.
    const broken = `
      const { Socket } = require('node:net');
      const { writeFileSync } = require('node:fs');
      const socket = new Socket({ fd: 3, readable: true, writable: true });
      socket.write(Buffer.from(${JSON.stringify([...encodeFrame({ type: 'ready', pid: 1 })])}));
      socket.write(Buffer.from(${JSON.stringify([...encodeFrame({ type: 'progress', phase: 'rewinding', target: '/nonexistent/sluice-launch-test' })])}));
      socket.on('data', (d) => { if (d.includes('"cancel"')) { writeFileSync(${JSON.stringify(marker)}, 'yes'); process.exit(0); } });
      setTimeout(() => process.exit(1), 5000);
    `;
    const image = openSync('/dev/null', 'r');
    try {
      const job = startHelper({
        source: image,
        job: START,
        // `--`: the helper's arguments that follow are the script's, not Node's options.
        program: { file: process.execPath, args: ['-e', broken, '--'], env: {} },
      });
      const [result] = await job.result;
      expect(result).toMatchObject({
        status: 'failed',
        code: 'protocol-error',
        message: expect.stringContaining('sent something invalid'),
      });
      expect(existsSync(marker) && readFileSync(marker, 'utf8')).toBe('yes');
    } finally {
      closeSync(image);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a helper that exits without a word: helper-died, saying it could not start and that nothing was written', async () => {
    const image = openSync('/dev/null', 'r');
    try {
      const job = startHelper({
        source: image,
        job: START,
        program: {
          file: process.execPath,
          args: ['-e', 'process.stderr.write("no luck\\n"); process.exit(7)', '--'],
          env: {},
        },
      });
      expect(await job.ready).toBeNull();
      expect(await job.result).toEqual([
        expect.objectContaining({
          status: 'failed',
          code: 'helper-died',
          message: 'The writing process could not be started (exit code 7: no luck). Nothing was written.',
        }),
      ]);
    } finally {
      closeSync(image);
    }
  });

  it('an elevation tool that refuses the command line it would be given: a result, not a thrown error', async () => {
    const image = openSync('/dev/null', 'r');
    try {
      const job = startHelper({
        source: image,
        job: START,
        elevation: pkexecLaunch,
        program: { file: 'relative/sluice-helper', args: [], env: {} },
      });
      expect(await job.result).toEqual([
        expect.objectContaining({ code: 'helper-died', message: expect.stringContaining('absolute program path') }),
      ]);
    } finally {
      closeSync(image);
    }
  });
});
