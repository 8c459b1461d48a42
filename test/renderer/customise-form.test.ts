import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { nextCardAfter, ProfileSchema, type Profile } from '../../common/domain/customisation.js';
import { customisationSummary, draftOf, formOf, withProfile } from '../../renderer/src/customise-form.js';

const PSK = 'ab'.repeat(32);
const HASH =
  '$6$abcdefghijklmnop$CWZE0Chchzv81JL4X7YJDXBQrR2R7FOFshH3DFZSnktu1MlfWCQFaarTUiu9HFWLKQwtd9RbPGkcQCtVPo55v1';
const saved: Profile = v.parse(ProfileSchema, {
  name: 'Classroom',
  hostname: 'pi-{n}',
  user: { name: 'alice', passwordHash: HASH },
  wifi: { ssid: 'Lab', psk: PSK, country: 'GB' },
  nextCard: 4,
});

function draft(form: ReturnType<typeof formOf>) {
  const made = draftOf(form);
  if ('problem' in made) throw new Error(made.problem);
  return made.draft;
}

describe('the Customise form', () => {
  it('gives back the profile it shows, holding its hash and PSK, with no secret to send', () => {
    expect(draft(formOf(saved))).toEqual({ profile: saved, password: null, wifiPassword: null });
  });

  it('sends a typed password and passphrase to be sealed, in place of the hash and PSK', () => {
    const d = draft({ ...formOf(saved), password: 'new "one"', wifiPassword: 'long passphrase' });
    expect(d).toMatchObject({
      password: 'new "one"',
      wifiPassword: 'long passphrase',
      profile: { user: { name: 'alice', passwordHash: null }, wifi: { psk: null } },
    });
  });

  it('asks for the Wi-Fi password again when the network name changed: the PSK is made from it', () => {
    expect(draftOf({ ...formOf(saved), ssid: 'Other' })).toEqual({
      problem: expect.stringContaining('Type the Wi-Fi password again'),
    });
    expect(draft({ ...formOf(saved), ssid: 'Other', wifiPassword: 'long passphrase' }).profile.wifi).toMatchObject({
      ssid: 'Other',
      psk: null,
    });
  });

  it('refuses SSH with keys only and no key, Wi-Fi without a country, a password without a user', () => {
    expect(draftOf({ ...formOf(null), ssh: 'keys' })).toHaveProperty('problem');
    expect(draftOf({ ...formOf(null), ssid: 'Lab' })).toHaveProperty('problem');
    expect(draftOf({ ...formOf(null), password: 'x' })).toHaveProperty('problem');
  });

  it('leaves every empty field as the image has it', () => {
    const d = draft(formOf(null));
    expect(Object.entries(d.profile).filter(([, value]) => value !== null)).toEqual([
      ['name', 'Customisation'],
      ['nextCard', 1],
    ]);
  });

  it('saves a profile in place of the one of its name, or adds it', () => {
    const other = { ...saved, name: 'Lab' };
    expect(withProfile([saved], { ...saved, nextCard: 9 })).toEqual([{ ...saved, nextCard: 9 }]);
    expect(withProfile([saved], other)).toEqual([saved, other]);
  });

  it('sums a profile up in a line', () => {
    expect(customisationSummary(saved)).toBe('host pi-{n} (next: 4), user alice, Wi-Fi Lab');
  });
});

describe('{n} after a flash', () => {
  it('moves past the last card customised, whatever failed before it, and stays when none was', () => {
    const ok = { status: 'ok', customised: true };
    const failed = { status: 'failed' };
    expect(nextCardAfter(4, [ok, ok])).toBe(6);
    expect(nextCardAfter(4, [failed, ok])).toBe(6);
    expect(nextCardAfter(4, [ok, failed])).toBe(5);
    expect(nextCardAfter(4, [failed, failed])).toBe(4);
    expect(nextCardAfter(4, [{ status: 'ok' }])).toBe(4);
  });
});
