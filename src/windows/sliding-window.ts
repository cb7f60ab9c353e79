// The last `duration` of records by event time, as a ring of per-slot Aggregates. Sliding is O(1):
// a slot is reset when its time comes round again; reading merges the live slots.
import type { Signals } from '../signals/classify.js';
import { Aggregate, type AggregateState } from './aggregate.js';

/** One slot's records as plain data, by its absolute slot number: what a parse worker hands the serving thread. */
export type SlotState = [id: number, state: AggregateState];

export type Clock = () => number;

export interface WindowOptions {
  durationMs: number;
  slotMs: number;
  relativeAccuracy: number;
  clock: Clock;
}

export class SlidingWindow {
  private readonly slots: Aggregate[];
  /** Which absolute slot number each ring entry currently holds (−1 = never used). */
  private readonly slotIds: number[];
  private readonly slotMs: number;
  private readonly size: number;

  constructor(private readonly opts: WindowOptions) {
    this.slotMs = opts.slotMs;
    this.size = Math.round(opts.durationMs / opts.slotMs);
    this.slots = Array.from({ length: this.size }, () => new Aggregate(opts.relativeAccuracy));
    this.slotIds = new Array<number>(this.size).fill(-1);
  }

  /** Adds a record at its event time. Records older than the window only count in the counters. */
  add(signals: Signals, latencySeconds: number, timeMs: number | undefined): void {
    const now = this.opts.clock();
    // A gateway clock slightly ahead of ours must not push the record out of every future window.
    const t = timeMs === undefined || timeMs > now ? now : timeMs;
    const id = Math.floor(t / this.slotMs);
    const newest = Math.floor(now / this.slotMs);
    if (id <= newest - this.size) return;
    const i = id % this.size;
    if (this.slotIds[i] !== id) {
      this.slots[i] = new Aggregate(this.opts.relativeAccuracy);
      this.slotIds[i] = id;
    }
    (this.slots[i] as Aggregate).add(signals, latencySeconds);
  }

  /** The records of the last `duration` (the current slot and the size−1 before it), merged. */
  snapshot(): Aggregate {
    const newest = Math.floor(this.opts.clock() / this.slotMs);
    const out = new Aggregate(this.opts.relativeAccuracy);
    for (let i = 0; i < this.size; i++) {
      const id = this.slotIds[i] as number;
      if (id > newest - this.size && id <= newest) out.merge(this.slots[i] as Aggregate);
    }
    return out;
  }

  /**
   * The slots that received records since the last drain, as plain data, emptied: a parse worker's window
   * (cli/parse-worker.ts) hands them to the serving thread's, which adds them with mergeSlots.
   */
  drainSlots(): SlotState[] {
    const out: SlotState[] = [];
    for (let i = 0; i < this.size; i++) {
      const slot = this.slots[i] as Aggregate;
      if (slot.requests === 0) continue;
      out.push([this.slotIds[i] as number, slot.state()]);
      this.slots[i] = new Aggregate(this.opts.relativeAccuracy);
    }
    return out;
  }

  /** Adds slots drained from another window of the same options; those already out of this window are dropped, as add() drops old records. */
  mergeSlots(slots: readonly SlotState[]): void {
    const newest = Math.floor(this.opts.clock() / this.slotMs);
    for (const [id, state] of slots) {
      if (id <= newest - this.size) continue;
      const i = id % this.size;
      if (this.slotIds[i] !== id) {
        // The ring holds a later slot here only if the clock stepped back: the newer records stay.
        if ((this.slotIds[i] as number) > id) continue;
        this.slots[i] = new Aggregate(this.opts.relativeAccuracy);
        this.slotIds[i] = id;
      }
      (this.slots[i] as Aggregate).mergeState(state);
    }
  }
}
