import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { createChannelDir } from '../../../user/launcher/channel-dir.js';

it('a new channel directory is named after this process, and those of app processes that are gone (killed with -9) are deleted first; a live one is kept', async () => {
  const gone = spawnSync('true').pid;
  const live = spawn('sleep', ['30']);
  const stale = join(tmpdir(), `sluice-helper-${gone}-test01`);
  const alive = join(tmpdir(), `sluice-helper-${live.pid ?? 0}-test02`);
  try {
    for (const dir of [stale, alive]) {
      mkdirSync(dir, { mode: 0o700 });
      writeFileSync(join(dir, 'left-over'), '');
    }
    const channel = await createChannelDir(false);
    try {
      expect(channel.dir).toMatch(new RegExp(`/sluice-helper-${process.pid}-[^/]+$`));
      expect(existsSync(stale)).toBe(false);
      expect(existsSync(join(alive, 'left-over'))).toBe(true);
    } finally {
      await channel.remove();
    }
  } finally {
    live.kill();
    rmSync(stale, { recursive: true, force: true });
    rmSync(alive, { recursive: true, force: true });
  }
});
