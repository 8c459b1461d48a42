/**
 * What the app's station screen and the main process tell each other: the request
 * that arms a station, and its state. Types and schemas only.
 */
import * as v from 'valibot';
import { HostnameTemplate } from '../domain/customisation.js';
import type { StationRules } from '../domain/station.js';
import { ByteCount } from '../domain/wire.js';
import { ImagePathSchema } from './app-models.js';

/** Reader slots a station may be limited to: more than any reader has. */
export const MAX_STATION_SLOTS = 64;

export const StationRequestSchema = v.strictObject({
  /** The image the renderer shows (its ImageInfo.source); refused if it is no longer the chosen one. */
  image: ImagePathSchema,
  /** A hostname template such as pi-{n}: card n (in insertion order) gets pi-n. Null: no customisation. */
  hostname: v.nullable(HostnameTemplate),
  /** Reader slots (/dev/disk/by-path names) a card must sit in; empty: any removable, USB or SD drive. */
  slots: v.pipe(v.array(v.pipe(v.string(), v.minLength(1), v.maxLength(1024))), v.maxLength(MAX_STATION_SLOTS)),
  minSize: ByteCount,
  maxSize: ByteCount,
});
export type StationRequest = v.InferOutput<typeof StationRequestSchema>;

/** Whether a station is armed, on what terms, and where its log is. */
export interface StationStatus {
  armed: boolean;
  rules: StationRules | null;
  /** The drives that were present at arming: never touched. */
  present: string[];
  /** The JSON Lines log every card is written to. */
  log: string;
  /** A problem of the station itself (the listing, the log), or null. */
  problem: string | null;
}
