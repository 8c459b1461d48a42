import { constants } from 'node:fs';
import { expect, it } from 'vitest';
import { directReadFlag } from '../../../user/files/file-target.js';

it('reads a file target back past the cache on every OS that has a flag for it, and says where none exists', () => {
  // libuv's uv/win.h: UV_FS_O_DIRECT 0x02000000, which libuv opens with FILE_FLAG_NO_BUFFERING.
  expect(directReadFlag('win32')).toBe(0x02000000);
  // Node defines O_DIRECT only where the OS has it (Linux here); anywhere else it is undefined,
  // which an OR silently turned into no flag at all.
  if (process.platform === 'linux') expect(directReadFlag('linux')).toBe(constants.O_DIRECT);
  expect(directReadFlag('darwin')).toBeNull();
});
