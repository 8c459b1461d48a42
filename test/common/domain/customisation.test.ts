import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import {
  customisationFor,
  CustomisationSchema,
  HostnameTemplate,
  isEmptyCustomisation,
  ProfileSchema,
  Ssid,
  utf8Length,
} from '../../../common/domain/customisation.js';

describe('customisation settings', () => {
  it('host names and templates', () => {
    expect(v.is(HostnameTemplate, 'pi-{n}')).toBe(true);
    expect(v.is(HostnameTemplate, 'lab.example')).toBe(true);
    for (const bad of ['-pi', 'pi-', 'pi_1', 'a'.repeat(64), 'pi {n}', '', "pi';reboot"])
      expect(v.is(HostnameTemplate, bad)).toBe(false);
  });

  it('a profile gives each card its own name and leaves the rest as it is', () => {
    const profile = v.parse(ProfileSchema, { name: 'Classroom', hostname: 'pi-{n}', timezone: 'Europe/London' });
    expect(profile.nextCard).toBe(1);
    expect(customisationFor(profile, 2)).toEqual({
      ...v.parse(CustomisationSchema, { timezone: 'Europe/London' }),
      hostname: 'pi-2',
    });
  });

  it('a profile file holds no password, only its hash', () => {
    expect(() => v.parse(ProfileSchema, { user: { name: 'alice', passwordHash: 'secret' } })).toThrow(
      /sha512-crypt hash/,
    );
    expect(() => v.parse(ProfileSchema, { user: { name: 'alice', password: 'secret' } })).toThrow();
    expect(() => v.parse(ProfileSchema, { wifi: { ssid: 'x', psk: 'passphrase', country: 'GB' } })).toThrow(
      /64-digit WPA key/,
    );
  });

  it('SSIDs are counted in bytes and may not break a line', () => {
    expect(utf8Length('Zoë☕')).toBe(7);
    expect(v.is(Ssid, 'é'.repeat(16))).toBe(true);
    expect(v.is(Ssid, 'é'.repeat(17))).toBe(false);
    expect(v.is(Ssid, 'a\nb')).toBe(false);
  });

  it('nothing set is nothing to write', () => {
    expect(isEmptyCustomisation(v.parse(CustomisationSchema, {}))).toBe(true);
    expect(isEmptyCustomisation(v.parse(CustomisationSchema, { keymap: 'gb' }))).toBe(false);
  });
});
