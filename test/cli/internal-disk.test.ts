/**
 * `sluice backup` of an internal disk of this computer: its name must be typed, as for erasing it.
 * No disk of this machine can be made an internal one for a test, so the listing's word on it is
 * given here; the question itself is asked through a stand-in for the terminal.
 */
import { describe, expect, it } from 'vitest';
import { unconfirmedInternalDisk } from '../../cli/internal-disk.js';
import { usbCard } from '../support/drive-fixtures.js';

const internal = usbCard('/dev/sdb', { system: 'internal', bus: 'sata', removable: false });

describe('a backup of an internal disk needs its name typed', () => {
  it('is refused with --yes or without a terminal, saying how to be asked', async () => {
    expect(await unconfirmedInternalDisk('/dev/sdb', internal, null)).toMatchObject({
      status: 'failed',
      code: 'target-system',
      message:
        '/dev/sdb is an internal disk of this computer: backing it up needs its name typed. Run without --yes, at a terminal, to be asked for it. Nothing was read.',
    });
  });

  it('asks, saying the disk is only read; a wrong name is refused, its own name lets it be read', async () => {
    const asked: string[] = [];
    const answer = (typed: string) => (question: string) => {
      asked.push(question);
      return Promise.resolve(typed);
    };
    expect(await unconfirmedInternalDisk('/dev/sdb', internal, answer('/dev/sda'))).toMatchObject({
      code: 'target-system',
      message: expect.stringContaining('The name typed did not match. Nothing was read.') as unknown,
    });
    expect(await unconfirmedInternalDisk('/dev/sdb', internal, answer('/dev/sdb'))).toBeNull();
    expect(asked).toEqual([
      'Type /dev/sdb to back it up (it is only read): ',
      'Type /dev/sdb to back it up (it is only read): ',
    ]);
  });

  it('a card, or a drive the listing does not know, is read without a question', async () => {
    const never = () => Promise.reject(new Error('asked'));
    expect(await unconfirmedInternalDisk('/dev/sdz', usbCard(), never)).toBeNull();
    expect(await unconfirmedInternalDisk('/dev/loop9', undefined, never)).toBeNull();
  });
});
