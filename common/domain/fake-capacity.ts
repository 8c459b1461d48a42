/**
 * A drive that is not the size it claims, as the capacity check of a flash (writer/capacity-check.ts)
 * and `sluice check` (writer/fake-capacity-check.ts) find it: what kind of fake it is and how much it
 * really holds. One schema and one set of words for the helper's results, the CLI and the app.
 */
import * as v from 'valibot';
import { formatBytes } from './units.js';
import { ByteCount } from './wire.js';

/**
 * - limbo: writes past the real capacity are dropped (they read back as zeros or as something else);
 * - wrap-around: offsets past it land at the start again, overwriting what is there;
 * - errors: reads or writes past it fail with I/O errors.
 */
export const FAKE_KINDS = ['limbo', 'wrap-around', 'errors'] as const;
export type FakeKind = (typeof FAKE_KINDS)[number];

export const FakeCapacitySchema = v.strictObject({
  kind: v.picklist(FAKE_KINDS),
  /** What the drive likely holds: the bytes it was seen to keep (a wrap-around: its period). */
  realBytes: ByteCount,
  /** What it announces. */
  claimedBytes: ByteCount,
});
export type FakeCapacity = v.InferOutput<typeof FakeCapacitySchema>;

/** What happens to data past the real capacity, for each kind: "writes past it are lost". */
export function fakeKindWords(fake: FakeCapacity): string {
  const real = formatBytes(fake.realBytes);
  switch (fake.kind) {
    case 'limbo':
      return `it drops what is written past about ${real} (limbo)`;
    case 'wrap-around':
      return `it wraps around at about ${real}: data written past that overwrites its beginning`;
    case 'errors':
      return `it fails with I/O errors past about ${real}`;
  }
}

/** The sentence for a drive found to be fake, naming it, its claim, its likely real size and what to do. */
export function fakeCapacityMessage(drive: string, fake: FakeCapacity): string {
  return `${drive} is not the size it claims: it announces ${formatBytes(fake.claimedBytes)} but holds only about ${formatBytes(fake.realBytes)}; ${fakeKindWords(fake)}. It is a counterfeit or failing drive: do not trust it with data; use another.`;
}
