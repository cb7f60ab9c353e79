// Which record times of one source (a file) are believed. A log's records come in the order they were
// written, each near the one before, but a file may hold more than one clock: three lines stamped
// 2000-01-01 by a host that booted with a wrong clock before an hour of real records, or two hosts whose
// clocks disagree by days writing into one file, one line each in turn. So the times of a file are kept as
// clusters (tracks): a record within history.maxGap of a track's recent times joins it, any other starts a
// new one. A track is believed once it holds history.minCluster records (its records until then are held,
// then believed in their order); a track that never gets there is a cluster of outliers, skipped and
// counted, unless no track of the file got there (a file of a few records): then its largest is believed.
// So a stale burst neither stretches the timeline nor moves it, a real jump (a quiet weekend, a gateway
// restarted) is believed once the log has gone on from there, and two clocks in one file are both kept.
// Times outside [notBefore, notAfter] are far-out at once.
//
// Where the source is on the timeline (what the replay counts up to) is the least of the recent times of
// its tracks still being written to: a track with no record among the file's last QUIET_FACTOR × minCluster
// is quiet (a clock that was fixed, the days before a jump) and no longer holds the timeline back.

/** Recent times a track keeps: its position is the least of them (a clock running a little behind another still holds the timeline). */
const RECENT = 16;
/** A track with no record among the file's last QUIET_FACTOR × minCluster records is quiet. */
const QUIET_FACTOR = 4;
/** Tracks per file at most: held records stay bounded (each candidate holds fewer than minCluster). */
export const MAX_TRACKS = 8;

export interface TimeFilterOptions {
  /** Records more than this from a track's recent times belong to another cluster. */
  maxGapMs: number;
  /** Records a cluster needs to be believed. */
  minCluster: number;
  notBeforeMs: number;
  notAfterMs: number;
}

/** Why a record is not believed: before notBefore or after notAfter, or a cluster too small to be believed. */
export type RejectReason = 'farOut' | 'outlier';

interface Track<T> {
  /** The last RECENT times, in a ring. */
  recent: number[];
  next: number;
  /** Records held until the track is believed (empty once it is). */
  held: { timeMs: number; item: T }[];
  believed: boolean;
  count: number;
  /** The file's record count when this track last got one. */
  lastAt: number;
}

export class TimeFilter<T> {
  private readonly tracks: Track<T>[] = [];
  /** Records offered that passed notBefore/notAfter. */
  private offered = 0;
  private lastBelieved: number | undefined;
  private lastTrack: Track<T> | undefined;

  constructor(
    private readonly opts: TimeFilterOptions,
    /** A believed record, in the order they are believed. */
    private readonly believe: (timeMs: number, item: T) => void,
    /** A record not believed, with the reason. */
    private readonly reject: (item: T, reason: RejectReason) => void,
  ) {}

  /**
   * Where the source is on the timeline: the least recent time of its tracks still written to (believed
   * or not yet); undefined before it believed a record.
   */
  get position(): number | undefined {
    if (this.lastBelieved === undefined) return undefined;
    let at = Infinity;
    for (const t of this.tracks) if (!this.quiet(t)) for (const r of t.recent) if (r < at) at = r;
    return at === Infinity ? this.lastBelieved : at;
  }

  /** The time of the last record believed: where a parse error after it is counted. */
  get lastTimeMs(): number | undefined {
    return this.lastBelieved;
  }

  offer(timeMs: number, item: T): void {
    if (timeMs < this.opts.notBeforeMs || timeMs > this.opts.notAfterMs) {
      this.reject(item, 'farOut');
      return;
    }
    this.offered++;
    // Most records join the track of the record before them: checked first, against its latest time.
    const last = this.lastTrack;
    const near = last !== undefined && Math.abs(timeMs - (last.recent[(last.next + RECENT - 1) % RECENT] ?? Infinity)) <= this.opts.maxGapMs;
    const track = near ? last : (this.trackFor(timeMs) ?? this.newTrack());
    if (track === undefined) {
      this.reject(item, 'outlier');
      return;
    }
    track.recent[track.next] = timeMs;
    track.next = (track.next + 1) % RECENT;
    track.count++;
    track.lastAt = this.offered;
    this.lastTrack = track;
    if (track.believed) {
      this.accept(timeMs, item);
      return;
    }
    track.held.push({ timeMs, item });
    if (track.held.length >= this.opts.minCluster) this.believeTrack(track);
  }

  /** The source ended: tracks not believed are outliers, unless none was believed (then the largest is). */
  end(): void {
    if (this.lastBelieved === undefined) {
      let largest: Track<T> | undefined;
      for (const t of this.tracks) if (largest === undefined || t.count >= largest.count) largest = t;
      if (largest !== undefined) this.believeTrack(largest);
    }
    for (const t of this.tracks) this.rejectTrack(t);
    this.tracks.length = 0;
    this.lastTrack = undefined;
  }

  private quiet(t: Track<T>): boolean {
    return this.offered - t.lastAt > QUIET_FACTOR * this.opts.minCluster;
  }

  /** The track whose recent times come nearest `timeMs`, if within maxGap. */
  private trackFor(timeMs: number): Track<T> | undefined {
    let best: Track<T> | undefined;
    let bestGap = Infinity;
    for (const t of this.tracks) {
      for (const r of t.recent) {
        const gap = Math.abs(timeMs - r);
        if (gap < bestGap) {
          bestGap = gap;
          best = t;
        }
      }
    }
    return bestGap <= this.opts.maxGapMs ? best : undefined;
  }

  /**
   * A new track. With MAX_TRACKS already, one makes room: a cluster not believed (its held records are
   * outliers; a quiet one first, then the smallest), else a believed one gone quiet; else undefined.
   */
  private newTrack(): Track<T> | undefined {
    if (this.tracks.length >= MAX_TRACKS) {
      let drop: Track<T> | undefined;
      const rank = (t: Track<T>) => (t.believed ? (this.quiet(t) ? 2 : 3) : this.quiet(t) ? 0 : 1);
      for (const t of this.tracks) {
        if (drop === undefined || rank(t) < rank(drop) || (rank(t) === rank(drop) && t.count < drop.count)) drop = t;
      }
      if (drop === undefined || rank(drop) === 3) return undefined;
      this.rejectTrack(drop);
      this.tracks.splice(this.tracks.indexOf(drop), 1);
      if (this.lastTrack === drop) this.lastTrack = undefined;
    }
    const t: Track<T> = { recent: [], next: 0, held: [], believed: false, count: 0, lastAt: this.offered };
    this.tracks.push(t);
    return t;
  }

  private accept(timeMs: number, item: T): void {
    this.lastBelieved = timeMs;
    this.believe(timeMs, item);
  }

  private believeTrack(t: Track<T>): void {
    t.believed = true;
    const held = t.held;
    t.held = [];
    for (const h of held) this.accept(h.timeMs, h.item);
  }

  private rejectTrack(t: Track<T>): void {
    const held = t.held;
    t.held = [];
    for (const h of held) this.reject(h.item, 'outlier');
  }
}
