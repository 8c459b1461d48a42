/**
 * Issue 13's acceptance, through the built CLI onto random-prefilled loop devices: each layout as
 * raw, .xz and .zip, flashed with every setting; the card then checked with the field's own tools
 * (fsck.fat, e2fsck, mtools, bash -n, shellcheck, cloud-init schema, netplan), byte for byte
 * against what the settings give, and grepped whole for a secret in clear.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as v from 'valibot';
import { beforeAll, expect, it } from 'vitest';
import { CustomisationSchema, type Customisation } from '../../common/domain/customisation.js';
import { metaData, networkConfig, userData } from '../../user/customise/cloud-init.js';
import { firstRunArguments, firstRunScript } from '../../user/customise/firstrun.js';
import { withArguments } from '../../user/customise/cmdline.js';
import { hashPassword, wifiPsk } from '../../user/customise/secrets.js';
import { assertTestTarget, collect, flashCli, resultsOf, spawnCli, type CliRun } from '../support/cli.js';
import {
  checkShellScript,
  cloudInitSchemaProblem,
  glibcCrypt,
  labPublicKeys,
  netplanProblem,
  parseToml,
  sshKeyPair,
} from '../support/customisation.js';
import { describeDevices } from '../support/device-suite.js';
import { serveFiles } from '../support/file-server.js';
import { createLoop, digestFile, readBytes, scratchDir, type LoopDevice } from '../support/loop-device.js';
import { imageFreeSpace } from '../support/free-space.js';
import { extentBytes, intersectExtents } from '../../common/domain/extents.js';
import {
  LAYOUT_BOOT_OFFSET,
  LAYOUT_BOOT_SIZE,
  LAYOUT_IMAGE_SIZE,
  LAYOUT_ROOT_OFFSET,
  LAYOUT_ROOT_SIZE,
  layoutImage,
  PI_CMDLINE,
  sh,
  UBUNTU_USER_DATA,
  type BootLayout,
} from '../support/os-image.js';

const CARD_SIZE = LAYOUT_IMAGE_SIZE + 16 * 1024 * 1024;
const PASSWORD = `Tr0ub4dor & "3" 'x'\nsecond line`;
const WIFI_PASSPHRASE = `correct "horse" battery`;
const SSID = 'Café "Zoë" — Lab';

/** A file of the boot partition, read from the card with mtools. */
function bootFile(device: string, name: string): Buffer {
  // mtools reads the device itself; its complaint that a loop device has no geometry is noise.
  return execFileSync('mtype', ['-i', `${device}@@${LAYOUT_BOOT_OFFSET}`, `::/${name}`], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
}

/** fsck.fat -n and e2fsck -fn on the card's own bytes (its partitions copied out of the backing file). */
function fsckProblems(card: LoopDevice, dir: string): string[] {
  const problems: string[] = [];
  const boot = join(dir, 'boot.part');
  const root = join(dir, 'root.part');
  writeFileSync(boot, readBytes(card.backing, LAYOUT_BOOT_OFFSET, LAYOUT_BOOT_SIZE));
  writeFileSync(root, readBytes(card.backing, LAYOUT_ROOT_OFFSET, LAYOUT_ROOT_SIZE));
  const fat = spawnSync('fsck.fat', ['-n', boot], { encoding: 'utf8' });
  if (fat.status !== 0) problems.push(`fsck.fat: ${fat.stdout}${fat.stderr}`);
  const ext = spawnSync('e2fsck', ['-fn', root], { encoding: 'utf8' });
  if (ext.status !== 0) problems.push(`e2fsck: ${ext.stdout}${ext.stderr}`);
  return problems;
}

/** Where `needle` appears anywhere on the card, or -1. */
function foundOnCard(card: LoopDevice, needle: string): number {
  return readFileSync(card.backing).indexOf(Buffer.from(needle, 'utf8'));
}

function verifyCli(image: string, target: string, flags: string[]): Promise<CliRun> {
  assertTestTarget(target);
  return collect(spawnCli(['verify', '--json', ...flags, image, target]));
}

describeDevices('customising a card (issue 13 acceptance)', () => {
  let dir: string;
  let flags: string[];
  let key: string;
  const images = new Map<BootLayout, string>();

  beforeAll(() => {
    dir = scratchDir();
    for (const layout of ['pi-os', 'ubuntu', 'none'] as const) images.set(layout, layoutImage(dir, layout));
    sh(dir, 'for f in pi-os ubuntu none; do xz -T2 -k -1 $f.img; zip -q -1 $f.img.zip $f.img; done');
    const keys = sshKeyPair(dir, 'ed25519', 'alice@laptop');
    key = readFileSync(keys.publicKey, 'utf8').trim();
    writeFileSync(join(dir, 'password'), `${PASSWORD}\n`);
    writeFileSync(join(dir, 'wifi-password'), `${WIFI_PASSPHRASE}\n`);
    flags = [
      '--no-eject',
      '--hostname',
      'pi-{n}',
      '--user',
      'alice',
      '--password-file',
      join(dir, 'password'),
      '--ssh-key',
      keys.publicKey,
      '--wifi-ssid',
      SSID,
      '--wifi-password-file',
      join(dir, 'wifi-password'),
      '--wifi-country',
      'DE',
      '--wifi-hidden',
      '--timezone',
      'Europe/Berlin',
      '--keymap',
      'de',
    ];
  });

  /** The settings the flags give card 1, with the hash the card holds (its salt is random). */
  function settings(passwordHash: string): Customisation {
    return v.parse(CustomisationSchema, {
      hostname: 'pi-1',
      user: { name: 'alice', passwordHash },
      ssh: { passwordAuth: false, authorizedKeys: [key] },
      wifi: { ssid: SSID, psk: wifiPsk(WIFI_PASSPHRASE, SSID), hidden: true, country: 'DE' },
      timezone: 'Europe/Berlin',
      keymap: 'de',
    });
  }

  function expectNoSecretInClear(card: LoopDevice): void {
    for (const secret of [PASSWORD, PASSWORD.split('\n')[0] ?? '', WIFI_PASSPHRASE])
      expect(foundOnCard(card, secret), secret).toBe(-1);
  }

  it.each(['.img', '.img.xz', '.img.zip'])(
    'Raspberry Pi OS-like, %s: firstrun.sh and cmdline.txt, exactly as the settings give them',
    async (suffix) => {
      const card = createLoop({ size: CARD_SIZE });
      const run = await flashCli(
        `${images.get('pi-os') ?? ''}${suffix === '.img' ? '' : suffix.slice(4)}`,
        [card.path],
        flags,
      );
      expect(run.code, run.stderr).toBe(0);
      expect(resultsOf(run).get(card.path)).toMatchObject({ status: 'ok', verified: true, customised: true });
      expect(run.events.find((e) => e.type === 'customisation')).toMatchObject({
        method: 'systemd-firstrun',
        files: [[{ name: 'firstrun.sh' }, { name: 'cmdline.txt' }]],
      });
      expect(fsckProblems(card, scratchDir())).toEqual([]);

      const script = bootFile(card.path, 'firstrun.sh').toString('utf8');
      const hash = /userconf 'alice' '(\$6\$[^']+)'/.exec(script)?.[1] ?? '';
      expect(glibcCrypt(PASSWORD, hash)).toBe(hash);
      expect(script).toBe(firstRunScript(settings(hash)));
      expect(checkShellScript(scratchDir(), script)).toEqual([]);
      const cmdline = bootFile(card.path, 'cmdline.txt').toString('utf8');
      expect(cmdline).toBe(withArguments(PI_CMDLINE, ['cfg80211.ieee80211_regdom=DE', ...firstRunArguments()]));
      expect(cmdline.split('\n')).toHaveLength(2);
      expect(cmdline.endsWith(` ${firstRunArguments().join(' ')}\n`)).toBe(true);
      expect(bootFile(card.path, 'config.txt').toString()).toMatch(/arm_64bit=1/);
      expectNoSecretInClear(card);
    },
  );

  it.each(['.img', '.img.xz', '.img.zip'])(
    'Ubuntu for Raspberry Pi-like, %s: the NoCloud seed files, exactly as the settings give them',
    async (suffix) => {
      const card = createLoop({ size: CARD_SIZE });
      const run = await flashCli(
        `${images.get('ubuntu') ?? ''}${suffix === '.img' ? '' : suffix.slice(4)}`,
        [card.path],
        flags,
      );
      expect(run.code, run.stderr).toBe(0);
      expect(resultsOf(run).get(card.path)).toMatchObject({ status: 'ok', customised: true });
      expect(fsckProblems(card, scratchDir())).toEqual([]);

      const user = bootFile(card.path, 'user-data').toString('utf8');
      const hash = /passwd: (\$6\$\S+)/.exec(user)?.[1] ?? '';
      expect(glibcCrypt(PASSWORD, hash)).toBe(hash);
      const c = settings(hash);
      expect(user).toBe(userData(c));
      expect(user).not.toBe(UBUNTU_USER_DATA);
      const network = bootFile(card.path, 'network-config').toString('utf8');
      expect(network).toBe(networkConfig(c));
      expect(bootFile(card.path, 'meta-data').toString('utf8')).toBe(metaData(c, userData(c), networkConfig(c)));
      expect(cloudInitSchemaProblem(scratchDir(), user)).toBeNull();
      expect(netplanProblem(scratchDir(), network)).toBeNull();
      // The seed files are on the boot partition already: cmdline.txt needs no ds=nocloud.
      expect(bootFile(card.path, 'cmdline.txt').toString()).not.toMatch(/ds=nocloud/);
      expectNoSecretInClear(card);
    },
  );

  it.each(['.img', '.img.xz', '.img.zip'])(
    'an image with no method, %s: the customisation is refused, naming what was looked for, and nothing is written; a plain flash still works',
    async (suffix) => {
      const image = `${images.get('none') ?? ''}${suffix === '.img' ? '' : suffix.slice(4)}`;
      const card = createLoop({ size: CARD_SIZE });
      const before = digestFile(card.backing);
      const refused = await flashCli(image, [card.path], ['--hostname', 'pi']);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toMatch(
        /This image cannot be customised: The boot partition \(partition 1\) has none of what Sluice looks for \(looked for cmdline\.txt and config\.txt \(Raspberry Pi OS\), cloud-init seed files/,
      );
      expect(refused.stderr).toMatch(/Nothing was written\./);
      expect(digestFile(card.backing)).toBe(before);
      const plain = await flashCli(image, [card.path], ['--no-eject']);
      expect(plain.code, plain.stderr).toBe(0);
      expect(resultsOf(plain).get(card.path)).toMatchObject({ status: 'ok', verified: true });
      expect(resultsOf(plain).get(card.path)).not.toHaveProperty('customised');
    },
  );

  it('an image with rpi-preseed: rpi-preseed.toml, which tomllib reads back as the settings, with the hash and the PSK marked encrypted', async () => {
    const card = createLoop({ size: CARD_SIZE });
    const run = await flashCli(layoutImage(scratchDir(), 'pi-os-preseed'), [card.path], flags);
    expect(run.code, run.stderr).toBe(0);
    expect(fsckProblems(card, scratchDir())).toEqual([]);
    const toml = parseToml(bootFile(card.path, 'rpi-preseed.toml').toString('utf8')) as { user: { password: string } };
    expect(glibcCrypt(PASSWORD, toml.user.password)).toBe(toml.user.password);
    expect(toml).toMatchObject({
      system: { hostname: 'pi-1' },
      user: { name: 'alice', password_encrypted: true },
      ssh: { enabled: true, authorized_keys: [key] },
      wlan: {
        ssid: SSID,
        password: wifiPsk(WIFI_PASSPHRASE, SSID),
        password_encrypted: true,
        hidden: true,
        country: 'DE',
      },
    });
    expect(bootFile(card.path, 'cmdline.txt').toString()).toBe(PI_CMDLINE);
    expectNoSecretInClear(card);
  });

  it('a boot partition too full for the new files: a clear error before anything is written', async () => {
    const full = layoutImage(scratchDir(), 'pi-os', { fillBoot: 512 });
    const card = createLoop({ size: CARD_SIZE });
    const before = digestFile(card.backing);
    const run = await flashCli(full, [card.path], flags);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(
      /The boot partition is too full for the customisation: firstrun\.sh, cmdline\.txt need \d+ KiB more and it has 1 KiB free\. Nothing was written\./,
    );
    expect(digestFile(card.backing)).toBe(before);
  });

  it('several cards at once: pi-{n} names each its own, pi-1 and pi-2', async () => {
    const cards = [createLoop({ size: CARD_SIZE }), createLoop({ size: CARD_SIZE })];
    const run = await flashCli(
      images.get('pi-os') ?? '',
      cards.map((c) => c.path),
      flags,
    );
    expect(run.code, run.stderr).toBe(0);
    for (const [i, card] of cards.entries()) {
      expect(resultsOf(run).get(card.path)).toMatchObject({ status: 'ok', customised: true });
      expect(bootFile(card.path, 'firstrun.sh').toString()).toMatch(new RegExp(`set_hostname 'pi-${i + 1}'`));
      expect(fsckProblems(card, scratchDir())).toEqual([]);
    }
  });

  it('sluice verify with the same customisation passes, and names the offset of one changed byte of firstrun.sh', async () => {
    // A profile holds the hash, so verify gives the card the same bytes as the flash did.
    const profile = join(dir, 'profile.json');
    writeFileSync(
      profile,
      JSON.stringify({
        name: 'Lab',
        hostname: 'lab-{n}',
        user: { name: 'alice', passwordHash: hashPassword(PASSWORD) },
        ssh: { authorizedKeys: [key] },
        timezone: 'Europe/London',
      }),
    );
    const image = `${images.get('pi-os') ?? ''}.xz`;
    const card = createLoop({ size: CARD_SIZE });
    const flashed = await flashCli(image, [card.path], ['--no-eject', '--customise', profile]);
    expect(flashed.code, flashed.stderr).toBe(0);
    const good = await verifyCli(image, card.path, ['--customise', profile]);
    expect(good.code, good.stderr).toBe(0);
    // Without the customisation, the card is not the image.
    expect((await verifyCli(image, card.path, [])).code).toBe(1);

    const script = bootFile(card.path, 'firstrun.sh');
    const at = readFileSync(card.backing).indexOf(script) + script.indexOf('lab-1');
    expect(at).toBeGreaterThan(LAYOUT_BOOT_OFFSET);
    const original = readBytes(card.backing, at, 1);
    execFileSync('dd', [`of=${card.backing}`, 'bs=1', `seek=${at}`, 'count=1', 'conv=notrunc', 'status=none'], {
      input: Buffer.from([original[0] === 0x6c ? 0x4c : 0x6c]),
    });
    const bad = await verifyCli(image, card.path, ['--customise', profile]);
    expect(bad.code).toBe(1);
    expect(resultsOf(bad).get(card.path)).toMatchObject({ status: 'failed', code: 'verify-mismatch', offset: at });
    expect(bad.stdout).toMatch(new RegExp(`1 byte differs, the first at byte offset ${at}`));
  });

  it("with a block map that leaves the boot partition's free space unwritten (as free-space skipping does), every cluster the customisation allocated is written whole and verified", async () => {
    const work = scratchDir();
    const sparse = layoutImage(work, 'pi-os', { name: 'sparse.img' });
    const bmap = join(work, 'pi-os.img.bmap');
    const mappedBy = (file: string) => {
      execFileSync('bmaptool', ['create', '-o', bmap, file], { stdio: 'ignore' });
      return [...readFileSync(bmap, 'utf8').matchAll(/<Range[^>]*> (\d+)(?:-(\d+))? </g)].map(
        (m) => [Number(m[1]), Number(m[2] ?? m[1])] as const,
      );
    };
    // An image whose map leaves out exactly the boot partition's free space, as free-space
    // skipping does: everything allocated, then the free clusters after the last file punched out.
    const usedEnd =
      4096 *
      (1 +
        Math.max(
          ...mappedBy(sparse)
            .filter(([from]) => from * 4096 < LAYOUT_ROOT_OFFSET)
            .map(([, to]) => to),
        ));
    const image = join(work, 'pi-os.img');
    execFileSync('cp', ['--sparse=never', sparse, image]);
    execFileSync('fallocate', [
      '--punch-hole',
      '--offset',
      String(usedEnd),
      '--length',
      String(LAYOUT_ROOT_OFFSET - usedEnd),
      image,
    ]);
    const mapped = mappedBy(image);
    expect(mapped).toEqual([
      [0, usedEnd / 4096 - 1],
      [LAYOUT_ROOT_OFFSET / 4096, LAYOUT_IMAGE_SIZE / 4096 - 1],
    ]);
    const profile = join(work, 'profile.json');
    writeFileSync(
      profile,
      JSON.stringify({
        hostname: 'kiosk',
        user: { name: 'alice', passwordHash: hashPassword(PASSWORD) },
        ssh: { authorizedKeys: [key] },
      }),
    );
    const card = createLoop({ size: CARD_SIZE });
    const run = await flashCli(image, [card.path], ['--no-eject', '--bmap', bmap, '--customise', profile]);
    expect(run.code, run.stderr).toBe(0);
    expect(resultsOf(run).get(card.path)).toMatchObject({ status: 'ok', verified: true, customised: true });
    expect(fsckProblems(card, scratchDir())).toEqual([]);

    // Where the boot partition's clusters are, from its own boot sector.
    const boot = readBytes(image, LAYOUT_BOOT_OFFSET, 512);
    const clusterBytes = boot.readUInt16LE(11) * boot.readUInt8(13);
    const dataOffset =
      LAYOUT_BOOT_OFFSET + (boot.readUInt16LE(14) + boot.readUInt8(16) * boot.readUInt32LE(36)) * boot.readUInt16LE(11);
    const script = bootFile(card.path, 'firstrun.sh');
    const chain = execFileSync('mshowfat', ['-i', `${card.path}@@${LAYOUT_BOOT_OFFSET}`, '::/firstrun.sh'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const clusters = [...chain.matchAll(/<(\d+)(?:-(\d+))?>/g)].flatMap((m) => {
      const first = Number(m[1]);
      return Array.from({ length: Number(m[2] ?? m[1]) - first + 1 }, (_, i) => first + i);
    });
    expect(clusters.length).toBe(Math.ceil(script.length / clusterBytes));
    const onCard = Buffer.concat(
      clusters.map((c) => readBytes(card.backing, dataOffset + (c - 2) * clusterBytes, clusterBytes)),
    );
    // The whole of each cluster, the zeros after the script's end included, is what Sluice wrote:
    // the card was random before, and the map left these clusters out of the image's write.
    expect(onCard.equals(Buffer.concat([script, Buffer.alloc(onCard.length - script.length)]))).toBe(true);
    const block = (c: number) => Math.floor((dataOffset + (c - 2) * clusterBytes) / 4096);
    // First fit starts in the last 4 KiB block the map has; the clusters after it were left out of the image's write.
    const unmapped = clusters.filter((c) => !mapped.some(([from, to]) => block(c) >= from && block(c) <= to));
    expect(unmapped.length).toBeGreaterThanOrEqual(clusters.length - 4096 / clusterBytes);
    expect(unmapped.length).toBeGreaterThan(0);
  });

  it.each(['.img', '.img.xz'])(
    'an image on the web, %s: customised while it downloads, as a local file is',
    async (suffix) => {
      const server = await serveFiles([`${images.get('pi-os') ?? ''}${suffix === '.img' ? '' : suffix.slice(4)}`], {
        ranges: true,
      });
      try {
        const card = createLoop({ size: CARD_SIZE });
        const run = await flashCli(`${server.base}/pi-os${suffix}`, [card.path], flags);
        expect(run.code, run.stderr).toBe(0);
        expect(resultsOf(run).get(card.path)).toMatchObject({ status: 'ok', verified: true, customised: true });
        expect(fsckProblems(card, scratchDir())).toEqual([]);
        const script = bootFile(card.path, 'firstrun.sh').toString('utf8');
        const hash = /userconf 'alice' '(\$6\$[^']+)'/.exec(script)?.[1] ?? '';
        expect(script).toBe(firstRunScript(settings(hash)));
        expectNoSecretInClear(card);
      } finally {
        await server.close();
      }
    },
  );

  /** The 512-byte clusters of a file of the card's boot partition, as device byte ranges (mshowfat's chain). */
  function clusterRanges(card: LoopDevice, image: string, name: string): [number, number][] {
    const boot = readBytes(image, LAYOUT_BOOT_OFFSET, 512);
    const clusterBytes = boot.readUInt16LE(11) * boot.readUInt8(13);
    const dataOffset =
      LAYOUT_BOOT_OFFSET + (boot.readUInt16LE(14) + boot.readUInt8(16) * boot.readUInt32LE(36)) * boot.readUInt16LE(11);
    const chain = execFileSync('mshowfat', ['-i', `${card.path}@@${LAYOUT_BOOT_OFFSET}`, `::/${name}`], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    return [...chain.matchAll(/<(\d+)(?:-(\d+))?>/g)].map((m) => [
      dataOffset + (Number(m[1]) - 2) * clusterBytes,
      (Number(m[2] ?? m[1]) - Number(m[1]) + 1) * clusterBytes,
    ]);
  }

  it.each(['.img', '.img.xz'])(
    'free space left out (the default), %s: the customisation lands in ranges the flash leaves out, and is still written, read back with mtools byte for byte, and compared by sluice verify, which names one changed byte of firstrun.sh there',
    async (suffix) => {
      const work = scratchDir();
      // The file's own images, made and compressed once (beforeAll); only read here.
      const raw = images.get('pi-os') ?? '';
      const image = `${raw}${suffix.slice(4)}`;
      // A lab's keys make firstrun.sh long enough (over 12 KiB) to take whole 4 KiB blocks of free space.
      const keys = [key, ...labPublicKeys(24)];
      const settings = {
        hostname: 'free-{n}',
        user: { name: 'alice', passwordHash: hashPassword(PASSWORD) },
        ssh: { authorizedKeys: keys },
        wifi: { ssid: SSID, psk: wifiPsk(WIFI_PASSPHRASE, SSID), country: 'DE' },
      };
      const profile = join(work, 'profile.json');
      writeFileSync(profile, JSON.stringify(settings));
      const card = createLoop({ size: CARD_SIZE });
      const run = await flashCli(image, [card.path], ['--no-eject', '--customise', profile]);
      expect(run.code, run.stderr).toBe(0);
      const result = resultsOf(run).get(card.path);
      expect(result).toMatchObject({ status: 'ok', verified: true, customised: true });
      expect(result?.skipped ?? 0).toBeGreaterThan(0);
      expect(fsckProblems(card, scratchDir())).toEqual([]);

      // firstrun.sh's clusters were free in the image: the flash left (most of) them as the random card had them.
      const free = await imageFreeSpace(raw, work);
      const script = clusterRanges(card, raw, 'firstrun.sh');
      const leftOut = intersectExtents(script, free);
      expect(extentBytes(leftOut)).toBeGreaterThanOrEqual(8192);

      const text = bootFile(card.path, 'firstrun.sh').toString('utf8');
      const hash = /userconf 'alice' '(\$6\$[^']+)'/.exec(text)?.[1] ?? '';
      const c = v.parse(CustomisationSchema, {
        ...settings,
        hostname: 'free-1',
        user: { name: 'alice', passwordHash: hash },
      });
      expect(text).toBe(firstRunScript(c));
      expect(bootFile(card.path, 'cmdline.txt').toString('utf8')).toBe(
        withArguments(PI_CMDLINE, ['cfg80211.ieee80211_regdom=DE', ...firstRunArguments()]),
      );

      const good = await verifyCli(image, card.path, ['--customise', profile]);
      expect(good.code, good.stdout + good.stderr).toBe(0);
      expect(resultsOf(good).get(card.path)?.skipped ?? 0).toBeGreaterThan(0);

      // One byte of firstrun.sh, in a range the flash and the verify leave out of the image's bytes.
      const [start = 0, run0 = 0] = script[0] ?? [];
      expect(run0).toBeGreaterThanOrEqual(text.length);
      const [from = 0, length = 0] = intersectExtents(leftOut, [[start, text.length]])[0] ?? [];
      expect(length).toBeGreaterThan(0);
      const at = from + Math.floor(length / 2);
      const original = readBytes(card.backing, at, 1);
      execFileSync('dd', [`of=${card.backing}`, 'bs=1', `seek=${at}`, 'count=1', 'conv=notrunc', 'status=none'], {
        input: Buffer.from([(original[0] ?? 0) ^ 0x20]),
      });
      const bad = await verifyCli(image, card.path, ['--customise', profile]);
      expect(bad.code).toBe(1);
      expect(resultsOf(bad).get(card.path)).toMatchObject({ status: 'failed', code: 'verify-mismatch', offset: at });
      expect(bad.stdout).toMatch(new RegExp(`1 byte differs, the first at byte offset ${at}`));
    },
  );

  it('an --ssh-key file that is not a public key (the private half, named by mistake): refused before anything is written', async () => {
    const { privateKey } = sshKeyPair(scratchDir());
    const card = createLoop({ size: CARD_SIZE });
    const before = digestFile(card.backing);
    const run = await flashCli(images.get('pi-os') ?? '', [card.path], ['--hostname', 'pi', '--ssh-key', privateKey]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      `sluice: ${privateKey} line 1 is not an SSH public key: it is a private key; give the public key (the .pub file next to it). Nothing was written.`,
    );
    expect(digestFile(card.backing)).toBe(before);
  });
});
