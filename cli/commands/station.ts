import { resolve } from 'node:path';
import { cutShortFailure } from '../../common/domain/cut-short.js';
import { JobError } from '../../common/domain/failure.js';
import { isUrl } from '../../common/domain/image.js';
import {
  DEFAULT_MAX_DRIVE_BYTES,
  rowProgress,
  type StationRow,
  type StationRules,
} from '../../common/domain/station.js';
import { formatBytes, formatDuration } from '../../common/domain/units.js';
import { startHelper } from '../../user/launcher/launch.js';
import { decoderOutputFor } from '../../user/launcher/transport.js';
import { cliHelperOptions } from '../helper-options.js';
import { imageName, imageSha256, imageForCard, type StationImage } from '../../user/station/station-image.js';
import { StationLog } from '../../user/station/station-log.js';
import { Station } from '../../user/station/station.js';
import { wantsCustomisation, type CustomiseFlags } from '../customise-flags.js';
import { EXIT } from '../exit-codes.js';
import { confirm } from '../prompt.js';
import { progressLine } from '../render.js';
import { loggedPhase } from '../../common/app/bottleneck.js';
import { prepareCliImage } from './prepare-cli-image.js';
import { decodeStationImage } from '../../user/station/decoded-image.js';
import { armsOnce, armStation } from '../../user/launcher/armed-station.js';
import { imageCache } from '../catalogue.js';
import { errorText } from '../../common/domain/error-details.js';

export interface StationArgs {
  image: string;
  customise: CustomiseFlags;
  /** Reader slots (their /dev/disk/by-path names) a card must sit in; empty: any. */
  slots: string[];
  minSize: number | undefined;
  maxSize: number | undefined;
  log: string;
  count: number | null;
  virtual: boolean;
  /** --exact: every card gets every byte of the image, as `flash --exact` writes them. */
  exact: boolean;
  /** --keep: the decoded copy of a compressed image stays in the cache when the station stops. */
  keep: boolean;
  /** --cache-limit: the image cache's size limit in bytes, which the decoded copy counts against. */
  cacheLimit?: number | undefined;
  yes: boolean;
  json: boolean;
  elevate?: 'sudo' | 'pkexec' | undefined;
}

/** A row's line when it ends: "card 2 /dev/sdc (slot …) pi-2: ok, 1.1 GB in 1 min 02 s". */
function doneLine(row: StationRow): string {
  const who = `${row.card === null ? 'refused' : `card ${row.card}`} ${row.device}${row.slot !== row.device ? ` (${row.slot})` : ''}${row.hostname === null ? '' : ` ${row.hostname}`}`;
  const seconds = row.endedAt === null ? 0 : (Date.parse(row.endedAt) - Date.parse(row.startedAt)) / 1000;
  if (row.result === 'ok')
    return `${who}: written and verified${row.hostname === null ? '' : ', customised'} in ${formatDuration(seconds)}. Take it out and insert the next card.`;
  return `${who}: ${row.result ?? 'failed'}${row.code === null ? '' : ` (${row.code})`}: ${row.message ?? 'no message'}`;
}

/** The station's output: JSON lines, a redrawn block with one line per active slot, or plain lines. */
function stationOutput(json: boolean): { row(row: StationRow): void; say(text: string): void } {
  if (json) {
    return {
      row: (row) => process.stdout.write(`${JSON.stringify({ type: 'row', ...row })}\n`),
      say: (text) => process.stderr.write(`${text}\n`),
    };
  }
  const active = new Map<number, string>();
  const live = process.stderr.isTTY === true;
  let drawn = 0;
  const redraw = () => {
    if (!live) return;
    const up = drawn > 0 ? `\x1b[${drawn}A` : '';
    process.stderr.write(`${up}\r${[...active.values()].map((l) => `\x1b[2K${l}\n`).join('')}\x1b[J`);
    drawn = active.size;
  };
  const phases = new Map<number, string>();
  return {
    row: (row) => {
      if (row.phase === 'done') {
        active.delete(row.id);
        redraw();
        drawn = 0;
        process.stdout.write(`${doneLine(row)}\n`);
        redraw();
        return;
      }
      const label = `${row.card === null ? '' : `card ${row.card} `}${row.device}`;
      const shown = rowProgress(row);
      const progress = shown === null ? row.phase : progressLine(shown);
      active.set(row.id, `${label.padEnd(18)} ${progress}`);
      if (live) return redraw();
      const phase = loggedPhase(row.phase);
      if (phases.get(row.id) !== phase) process.stderr.write(`${label}: ${phase}…\n`);
      phases.set(row.id, phase);
    },
    say: (text) => {
      drawn = 0;
      process.stderr.write(`${text}\n`);
      redraw();
    },
  };
}

/**
 * `sluice station IMAGE [--customise PROFILE.json] [--slots PATH]... [--min-size N --max-size N]
 * [--log FILE] [--count N] [--exact] [--virtual] [--yes] [--json]`: arms a flashing station. Every drive
 * that appears afterwards and passes the rules gets its own job; each card ends in one log line.
 * Runs until Ctrl-C or N cards.
 */
export async function stationCommand(args: StationArgs): Promise<number> {
  if (isUrl(args.image)) {
    process.stderr.write(
      'sluice: a station writes an image file, read again for every card: download the image first.\n',
    );
    return EXIT.usage;
  }
  const interactive = process.stdin.isTTY === true;
  if (!args.yes && !interactive) {
    process.stderr.write(
      'sluice: refusing to arm a station without confirmation; pass --yes when running without a terminal.\n',
    );
    return EXIT.usage;
  }
  const prepared = await prepareCliImage({
    image: args.image,
    bmap: args.exact ? false : undefined,
    partitions: false,
  });
  if (typeof prepared === 'number') return prepared;
  const cutShort = cutShortFailure(prepared.info);
  if (cutShort !== null) {
    process.stderr.write(`sluice: ${cutShort.message} A station does not write such an image. Nothing was written.\n`);
    return EXIT.failed;
  }
  const helperOptions = cliHelperOptions(args.elevate);
  const output = stationOutput(args.json);
  let image: StationImage;
  try {
    const profile = wantsCustomisation(args.customise)
      ? await (await import('../customise-options.js')).profileFromFlags(args.customise)
      : null;
    image = {
      request: { image: args.image, partitions: false },
      prepared,
      exact: args.exact,
      profile,
      name: imageName({ image: args.image }),
      sha256: prepared.info.checksum?.sha256.toLowerCase() ?? (await imageSha256(args.image)),
      // A helper's log lines go through the station's screen, which redraws its rows below them.
      launch: (options) =>
        startHelper({ ...options, ...helperOptions, onLog: (_level, message) => output.say(`sluice: ${message}`) }),
      decoderOutput: decoderOutputFor(helperOptions.elevation),
    };
    // The first card's customisation, planned now: an image that cannot take it is refused before arming.
    if (profile !== null) await imageForCard(image, profile.nextCard);
  } catch (error) {
    if (!(error instanceof JobError)) throw error;
    process.stderr.write(`sluice: ${error.message}\n`);
    return error.failure.code === 'unsupported-format' ? EXIT.unsupportedFormat : EXIT.usage;
  }
  const imageSize = prepared.imageSize ?? prepared.info.size;
  const rules: StationRules = {
    imageSize,
    minSize: args.minSize ?? imageSize ?? 1,
    maxSize: args.maxSize ?? DEFAULT_MAX_DRIVE_BYTES,
    slots: args.slots.length === 0 ? null : args.slots.map((s) => resolve(s)),
    virtual: args.virtual,
  };
  if (rules.minSize > rules.maxSize) {
    process.stderr.write(`sluice: --min-size ${rules.minSize} is above --max-size ${rules.maxSize}.\n`);
    return EXIT.usage;
  }
  const rulesText = `every ${rules.virtual ? 'removable, USB, SD or virtual' : 'removable, USB or SD'} drive of ${formatBytes(rules.minSize)} to ${formatBytes(rules.maxSize)}${rules.slots === null ? '' : ` in ${rules.slots.join(', ')}`} that appears from now on`;
  if (
    !args.yes &&
    !(await confirm(
      `Arm the station? It will ERASE ${rulesText}, writing ${image.name}${image.profile?.hostname ? ` (hostname ${image.profile.hostname})` : ''}.`,
    ))
  ) {
    process.stderr.write('Not armed. Nothing was written.\n');
    return EXIT.cancelled;
  }
  // A compressed or downloaded image is decoded once, now, rather than once per card.
  let decoded;
  try {
    decoded = await decodeStationImage(image, imageCache(args.cacheLimit), args.keep);
  } catch (error) {
    process.stderr.write(`sluice: ${errorText(error)} Nothing was written.\n`);
    return EXIT.failed;
  }
  try {
    return await runStation(args, decoded.image, rules, rulesText, output, decoded.note);
  } finally {
    await decoded.dispose();
  }
}

/**
 * The station's root side, armed once for the whole batch where each card would otherwise ask for
 * root on its own (user/launcher/armed-station.ts); `image` with its cards' helpers started through
 * it. An exit code, after saying why, when it could not be armed.
 */
async function armRoot(
  image: StationImage,
  rules: StationRules,
  elevate: StationArgs['elevate'],
  output: ReturnType<typeof stationOutput>,
): Promise<{ image: StationImage; stop(): Promise<void> } | number> {
  const { elevation, interactive } = cliHelperOptions(elevate);
  if (elevation === undefined || !armsOnce(elevation, image.prepared)) return { image, stop: () => Promise.resolve() };
  const onLog = (message: string) => output.say(`sluice: ${message}`);
  try {
    const armed = await armStation({
      limits: {
        minSize: rules.minSize,
        maxSize: rules.maxSize,
        slots: [...(rules.slots ?? [])],
        virtual: rules.virtual,
      },
      elevation,
      interactive,
      onLog,
    });
    return {
      image: {
        ...image,
        launch: (options) => armed.launch({ ...options, onLog: (_level, message) => onLog(message) }),
      },
      stop: () => armed.stop(),
    };
  } catch (error) {
    process.stderr.write(`sluice: ${errorText(error)}\n`);
    return error instanceof JobError && error.failure.code === 'elevation-denied' ? EXIT.notAuthorized : EXIT.failed;
  }
}

/** Arms the station with its image ready, and runs it until it stops. */
async function runStation(
  args: StationArgs,
  image: StationImage,
  rules: StationRules,
  rulesText: string,
  output: ReturnType<typeof stationOutput>,
  note: string | null,
): Promise<number> {
  let log: StationLog;
  try {
    log = await StationLog.open(args.log);
  } catch (error) {
    process.stderr.write(`sluice: the station log cannot be opened: ${errorText(error)}. Nothing was written.\n`);
    return EXIT.usage;
  }
  if (note !== null) output.say(note);
  const root = await armRoot(image, rules, args.elevate, output);
  if (typeof root === 'number') {
    await log.close();
    return root;
  }
  try {
    return await watchCards(args, root.image, rules, rulesText, output, log);
  } finally {
    await root.stop();
  }
}

/** Arms the station itself and writes every card that comes, until it stops. */
async function watchCards(
  args: StationArgs,
  image: StationImage,
  rules: StationRules,
  rulesText: string,
  output: ReturnType<typeof stationOutput>,
  log: StationLog,
): Promise<number> {
  let failed = false;
  const station = new Station({
    image,
    rules,
    log,
    count: args.count,
    onRow: (row) => {
      if (row.phase === 'done' && row.result !== 'ok' && row.result !== 'refused') failed = true;
      output.row(row);
    },
    onProblem: (message) => {
      failed = true;
      output.say(`sluice: ${message}`);
    },
  });
  let present;
  try {
    present = await station.arm();
  } catch (error) {
    await log.close();
    process.stderr.write(`sluice: ${error instanceof Error ? error.message : String(error)}\n`);
    return EXIT.failed;
  }
  if (args.json)
    process.stdout.write(
      `${JSON.stringify({ type: 'armed', present: present.map((d) => d.device), rules, log: log.path, image: image.name, sha256: image.sha256 })}\n`,
    );
  output.say(
    `Armed: ${rulesText} is written with ${image.name}. Left alone: ${present.map((d) => d.device).join(', ') || 'no drive'}. Log: ${log.path}. ${args.count === null ? 'Ctrl-C stops.' : `Stops after ${args.count} card${args.count === 1 ? '' : 's'}.`}`,
  );
  let interrupted = false;
  const onSignal = () => {
    if (interrupted) process.exit(EXIT.cancelled);
    interrupted = true;
    output.say(
      'Stopping: no more cards are taken; cards being written are cancelled (Ctrl-C again quits at once, leaving them incomplete).',
    );
    void station.stop(true);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  await station.done;
  process.off('SIGINT', onSignal);
  process.off('SIGTERM', onSignal);
  await log.close();
  if (args.json) process.stdout.write(`${JSON.stringify({ type: 'stopped' })}\n`);
  return interrupted ? EXIT.cancelled : failed ? EXIT.failed : EXIT.ok;
}
