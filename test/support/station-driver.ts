/**
 * A stand-in for the station's unprivileged side that skips every check of its own: it arms a
 * station's root side through sudo (user/launcher/armed-station.ts), prints `armed`, and then, for
 * every JSON line on stdin ({device, medium, image, imageSize}), asks root straight away for a
 * helper that flashes the image to that device, printing its `result`. What stops a wrong card is
 * then root alone. A line {cancel: device} cancels that device's card. Built to
 * out/test/support/station-driver.js; the limits are argv[2] as JSON. End of stdin disarms the
 * station once every card has ended.
 */
import { closeSync, openSync } from 'node:fs';
import { createInterface } from 'node:readline';
import type { StationLimits } from '../../node/helper-command-line.js';
import { armStation } from '../../user/launcher/armed-station.js';
import { sudoLaunch } from '../../user/launcher/elevation/sudo.js';
import { builtHelper } from './unprivileged.js';

interface CardRequest {
  device: string;
  medium: string | null;
  image: string;
  imageSize: number;
  /** False: this side never opens the card's image FIFO, so root's open of it waits until the job ends. */
  feed?: boolean;
}

const limits = JSON.parse(process.argv[2] ?? '{}') as StationLimits;
const print = (event: object) => process.stdout.write(`${JSON.stringify(event)}\n`);
const station = await armStation({
  limits,
  elevation: sudoLaunch,
  program: builtHelper(),
  onLog: (message) => process.stderr.write(`${message}\n`),
});
print({ type: 'armed' });

const cards: Promise<void>[] = [];
const launched = new Map<string, { cancel: () => void }>();
for await (const line of createInterface({ input: process.stdin })) {
  const request = JSON.parse(line) as CardRequest | { cancel: string };
  if ('cancel' in request) {
    launched.get(request.cancel)?.cancel();
    continue;
  }
  const card = request;
  const image = card.feed === false ? undefined : openSync(card.image, 'r');
  const helper = station.launch({
    source: image,
    job: {
      kind: 'flash',
      targets: [card.device],
      media: [card.medium],
      imageSize: card.imageSize,
      sourceSeekable: true,
      verify: true,
      capacityCheck: false,
    },
    onLog: (_level, message) => process.stderr.write(`${message}\n`),
  });
  launched.set(card.device, helper);
  cards.push(
    helper.result.then((results) => {
      if (image !== undefined) closeSync(image);
      print({ type: 'result', device: card.device, results });
    }),
  );
}
await Promise.all(cards);
await station.stop();
