// The file follower's descriptors, read at scrape time: how many files it follows, how many it holds
// open, and the cap it holds them under (sources.maxOpenFiles, lowered below the process's limit).
import { GaugeFamily } from './families.js';

/** What the gauges read; FileFollower has these. */
export interface FollowerCounts {
  readonly followedCount: number;
  readonly openFileCount: number;
  readonly openFileCap: number;
}

export class FollowerGauges {
  readonly followed = new GaugeFamily('zero_plane_exporter_followed_files', 'Files followed now, open or closed until they change.', []);
  readonly open = new GaugeFamily('zero_plane_exporter_open_files', 'Followed files held open now.', []);
  readonly cap = new GaugeFamily('zero_plane_exporter_open_files_limit', 'Followed files held open at most: sources.maxOpenFiles, lowered to leave descriptors for the HTTP server.', []);

  constructor(private readonly follower: FollowerCounts) {}

  families() {
    return [this.followed, this.open, this.cap];
  }

  refresh(): void {
    this.followed.set([], this.follower.followedCount);
    this.open.set([], this.follower.openFileCount);
    this.cap.set([], this.follower.openFileCap);
  }
}
