// The file follower's descriptors, read at scrape time: how many files it follows, how many it holds
// open, the cap it holds them under (sources.maxOpenFiles, lowered below the process's limit), and how its
// directories are followed: a directory polled where a watch was meant is the idle CPU's first suspect.
import { DIRECTORY_POLL_REASONS, type DirectoryMode } from '../source/directory-watch.js';
import { GaugeFamily } from './families.js';

/** What the gauges read; FileFollower has these. */
export interface FollowerCounts {
  readonly followedCount: number;
  readonly openFileCount: number;
  readonly openFileCap: number;
  readonly directoryModes: ReadonlyMap<DirectoryMode, number>;
}

export class FollowerGauges {
  readonly followed = new GaugeFamily('zero_plane_exporter_followed_files', 'Files followed now, open or closed until they change.', []);
  readonly open = new GaugeFamily('zero_plane_exporter_open_files', 'Followed files held open now.', []);
  readonly cap = new GaugeFamily('zero_plane_exporter_open_files_limit', 'Followed files held open at most: sources.maxOpenFiles, lowered to leave descriptors for the HTTP server.', []);
  readonly watched = new GaugeFamily(
    'zero_plane_exporter_watched_directories',
    'Directories of followed files watched now (sources.watch: auto): their idle files are stat-ed only when an event names them.',
    [],
  );
  readonly polled = new GaugeFamily(
    'zero_plane_exporter_polled_directories',
    'Directories of followed files polled now, by reason: off (sources.watch: off), unreliable_fs (a network or FUSE filesystem), watch_limit, watch_error, absent (not there yet).',
    ['reason'],
  );

  constructor(private readonly follower: FollowerCounts) {}

  families() {
    return [this.followed, this.open, this.cap, this.watched, this.polled];
  }

  refresh(): void {
    this.followed.set([], this.follower.followedCount);
    this.open.set([], this.follower.openFileCount);
    this.cap.set([], this.follower.openFileCap);
    const modes = this.follower.directoryModes;
    this.watched.set([], modes.get('watched') ?? 0);
    // Every reason is exposed, 0 included, so that an alert on one needs no absent().
    for (const reason of DIRECTORY_POLL_REASONS) this.polled.set([reason], modes.get(reason) ?? 0);
  }
}
