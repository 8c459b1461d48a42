/**
 * The messages between an armed station's root side (privileged/armed-station.ts), started once
 * for a whole batch, and the unprivileged station that asks it for one card's helper at a time
 * (user/launcher/armed-station.ts). Framed and schema-checked like the helper's own channel
 * (helper-protocol.ts): root trusts nothing it is sent.
 */
import * as v from 'valibot';
import { MAX_STATION_JOBS } from '../domain/station.js';

/** The exit status root reports for a card it refused to start a helper for: not the helper's (0-5), nor a signal's. */
export const STATION_REFUSED = 78;

/** The cards' jobs root runs at once at most: the station's own limit. */
export const MAX_STATION_HELPERS = MAX_STATION_JOBS;

const LaunchId = v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(Number.MAX_SAFE_INTEGER));
const Arg = v.pipe(v.string(), v.maxLength(4096));

/** Unprivileged side → root. */
export const ToStation = v.variant('type', [
  /**
   * Start one card's helper with this command line (node/helper-command-line.ts: FIFO channel,
   * one target, this side as its parent). Root checks the card against the station's rules first.
   */
  v.strictObject({ type: v.literal('launch'), id: LaunchId, args: v.pipe(v.array(Arg), v.maxLength(16)) }),
  /** Stop that card's job (it stops cleanly at its next block), as closing a password prompt would. */
  v.strictObject({ type: v.literal('kill'), id: LaunchId }),
]);
export type ToStation = v.InferOutput<typeof ToStation>;

/** Root → unprivileged side. */
export const FromStation = v.variant('type', [
  /** The station is armed: every medium present now has a disk sequence number at most `diskseq`. */
  v.strictObject({
    type: v.literal('armed'),
    pid: v.pipe(v.number(), v.integer(), v.minValue(1)),
    diskseq: v.pipe(v.string(), v.regex(/^\d{1,20}$/)),
  }),
  /** Why a card's job could not run: root refused it, or could not open its channel. */
  v.strictObject({ type: v.literal('stderr'), id: LaunchId, text: v.pipe(v.string(), v.maxLength(16384)) }),
  /** A card's job ended, with a helper's exit status (STATION_REFUSED: root never started it). */
  v.strictObject({
    type: v.literal('exit'),
    id: LaunchId,
    code: v.nullable(v.pipe(v.number(), v.integer())),
    signal: v.nullable(v.pipe(v.string(), v.maxLength(16))),
  }),
]);
export type FromStation = v.InferOutput<typeof FromStation>;
