// What `serve` does when a follower reports: count it in the metrics of the pipeline its lines go to, and
// log it. The same on the serving thread (stdin, or parse.workers: 0) and in a parse worker.
import type { Dropped } from '../checkpoint/checkpoint-state.js';
import type { ExporterMetrics } from '../metrics/exporter-metrics.js';
import type { Logger } from '../server/logger.js';
import type { SourceEvents } from '../source/line-sink.js';

export interface FollowerEventHooks {
  /** A checkpointed offset not trusted: the checkpointer reports it with what it dropped. */
  dropped(d: Dropped): void;
  /** The directories watched now, and the watches that fell back to polling, for the log. */
  watched(): { watched: number; fallbacks: number } | undefined;
}

export function followerEvents(metrics: ExporterMetrics, log: Logger, hooks: FollowerEventHooks): SourceEvents {
  return {
    error: (source, reason, detail) => {
      metrics.sourceErrors.inc([source, reason]);
      log.warn('source problem; retrying', { source, reason, detail });
    },
    opened: (source, path) => log.info('following file', { source, path }),
    rotated: (source, path, kind) => {
      metrics.rotations.inc([source, kind]);
      log.info('file rotated', { source, path, kind });
    },
    skipped: (source, bytes, reason) => {
      metrics.skippedBytes.inc([source, reason], bytes);
      log.warn('bytes skipped', { source, bytes, reason });
    },
    unrecoveredLines: (source, path, lines) => {
      metrics.unrecoveredLines.inc([source], lines);
      log.warn('lines lost: file deleted or compressed before it could be read (an estimate)', { source, path, lines });
    },
    partialLine: (source, path) => {
      metrics.partialLines.inc([source]);
      log.info('partial last line delivered', { source, path });
    },
    resumed: (source, path, outcome, offset) => {
      if (outcome === 'gone') log.warn('checkpointed file not found; lines it held past the checkpoint, if any, are lost', { source, path, offset });
      else log.info(outcome === 'moved' ? 'resuming file rotated while stopped' : 'resuming file', { source, path, offset });
    },
    offsetDistrusted: (source, path, checkpointed, offset) => {
      hooks.dropped({ reason: 'offset_not_line_start', what: `${path}@${checkpointed}` });
      log.warn('checkpointed offset is not at a line start; resuming at the next one', { source, path, checkpointed, offset });
    },
    openFilesCapped: (cap, reason) => {
      if (reason === 'cap_reached') log.info('more files followed than held open: the least recently active are closed and reopened when they change', { maxOpenFiles: cap });
      else log.warn('the process ran out of file descriptors: fewer followed files are held open', { maxOpenFiles: cap });
    },
    watchFallback: (dir, reason, detail) => {
      const w = hooks.watched();
      const fields = { dir, reason, detail, fallbacks: w?.fallbacks, watched: w?.watched };
      if (reason === 'unreliable_fs') log.info('directory polled, not watched: its filesystem may change without events', fields);
      else log.warn('directory polled, not watched: no inotify watch could be set up (sources.watch)', fields);
    },
  };
}
