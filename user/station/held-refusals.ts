/**
 * The cards a station refused that are still in their readers. A card that is still settling (a
 * reader that reports its size or its write-protect switch late, a loop device being resized) can
 * be refused for a moment, so:
 * - a refusal is shown (logged, and its row ended) only once the card has held still for
 *   REFUSAL_SETTLE_MS, or when the card goes or the station stops first;
 * - the station judges a refused card again whenever the listing reports it changed;
 * - a card refused again for the reason already shown is not shown again.
 * A card that is too small or read-only for good is therefore refused once, with its reason, and a
 * card that settles into an acceptable one is taken.
 */
import type { StationRow } from '../../common/domain/station.js';

/** How long a card must hold still before its refusal is shown: longer than a reader or a loop device takes to settle, short enough that a refused card is answered at once to a person. */
export const REFUSAL_SETTLE_MS = 2000;

interface Held {
  /** The card's medium (mediumId): another card in the same reader is judged afresh. */
  medium: string | null;
  /** The refusal's code once shown. */
  shown: string | null;
  /** Ends the wait before showing the latest refusal: shows it, or drops it. */
  settle: ((show: boolean) => void) | null;
}

export class HeldRefusals {
  private readonly held = new Map<string, Held>();

  constructor(
    private readonly show: (row: StationRow) => Promise<void>,
    private readonly track: (job: Promise<void>) => void,
  ) {}

  /** Whether the card `medium` in `device` was refused, and so is judged again when it changes. */
  has(device: string, medium: string | null): boolean {
    const held = this.held.get(device);
    return held !== undefined && (medium === null || held.medium === medium);
  }

  /** `row` is a refusal of the card `medium` in its device: shown once the card has held still, unless shown already. */
  refuse(row: StationRow, medium: string | null): void {
    const previous = this.held.get(row.device);
    const sameCard = previous !== undefined && (medium === null || previous.medium === medium);
    previous?.settle?.(!sameCard);
    const shown = sameCard ? previous.shown : null;
    const held: Held = { medium, shown, settle: null };
    this.held.set(row.device, held);
    if (shown === row.code) return;
    const settled = new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(true), REFUSAL_SETTLE_MS);
      held.settle = (show) => {
        clearTimeout(timer);
        resolve(show);
      };
    });
    this.track(
      settled.then(async (show) => {
        held.settle = null;
        if (!show) return;
        held.shown = row.code;
        await this.show(row);
      }),
    );
  }

  /** The card in `device` is gone (a refusal not yet shown is its last word: shown now) or taken (dropped). */
  forget(device: string, gone: boolean): void {
    this.held.get(device)?.settle?.(gone);
    this.held.delete(device);
  }

  /** The station stops: every refusal not yet shown is shown now. */
  flush(): void {
    for (const held of this.held.values()) held.settle?.(true);
  }
}
