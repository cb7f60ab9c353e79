// Writes checkpoints on a schedule (node-cron) and on demand (at shutdown), and reads the one left by the
// previous run. A write that fails is logged and counted, never fatal: the exporter keeps serving, and the
// previous checkpoint stays whole on disk (see checkpoint-file.ts).
import { schedule, type ScheduledTask } from 'node-cron';
import { CounterFamily, GaugeFamily } from '../metrics/families.js';
import type { Logger } from '../server/logger.js';
import { moveAside, NotACheckpointError, readCheckpointFile, removeStaleTemporaries, writeCheckpointFile } from './checkpoint-file.js';
import { decodeCheckpoint, DROP_REASONS, type Checkpoint, type CheckpointJson, type Dropped, type DropReason } from './checkpoint-state.js';

export { NotACheckpointError };

export interface CheckpointerOptions {
  file: string;
  /** node-cron expression (6 fields: with seconds), validated by the config schema. */
  schedule: string;
  log: Logger;
  /** The checkpoint of this moment (taken where no line is half-delivered). */
  take: () => Promise<CheckpointJson>;
}

export type WriteReason = 'schedule' | 'shutdown';

export class Checkpointer {
  readonly writes = new CounterFamily('zero_plane_exporter_checkpoint_writes_total', 'Checkpoint writes (on checkpoint.schedule and at shutdown), by result (ok or error).', ['result']);
  readonly lastSuccess = new GaugeFamily(
    'zero_plane_exporter_checkpoint_last_success_timestamp_seconds',
    'When a checkpoint was last written successfully (Unix time); absent until the first one.',
    [],
  );
  readonly dropped = new CounterFamily(
    'zero_plane_exporter_checkpoint_dropped_total',
    'Values of the restored checkpoint dropped instead of served, by reason (negative, not_finite, histogram, labels, file_position, offset_not_line_start).',
    ['reason'],
  );
  private task: ScheduledTask | undefined;
  /** The write under way, if any: writes never overlap. */
  private chain: Promise<unknown> = Promise.resolve();
  /** A failing streak is logged once when it starts and once when it ends, not at every attempt. */
  private failing = false;

  constructor(private readonly opts: CheckpointerOptions) {
    this.writes.touch(['ok']);
    this.writes.touch(['error']);
    for (const reason of DROP_REASONS) this.dropped.touch([reason]);
  }

  families() {
    return [this.writes, this.lastSuccess, this.dropped];
  }

  get file(): string {
    return this.opts.file;
  }

  /**
   * Counts and logs what the restore dropped: one warning per reason, with how many and a few of them
   * (a checkpoint with a million bad values must not write a million log lines).
   */
  reportDropped(dropped: readonly Dropped[]): void {
    const byReason = new Map<DropReason, string[]>();
    for (const d of dropped) {
      const list = byReason.get(d.reason) ?? [];
      list.push(d.what);
      byReason.set(d.reason, list);
    }
    for (const [reason, what] of byReason) {
      this.dropped.inc([reason], what.length);
      this.opts.log.warn('checkpoint values dropped, not restored', { file: this.opts.file, reason, count: what.length, examples: what.slice(0, 5).join(' ') });
    }
  }

  start(): void {
    const log = this.opts.log;
    this.task = schedule(this.opts.schedule, () => this.write('schedule'), {
      name: 'checkpoint',
      noOverlap: true,
      // A run missed because the process was busy is harmless (the next one comes): debug, not a warning.
      logger: {
        info: (m) => log.debug(m),
        warn: (m) => log.debug(m),
        error: (m, err) => log.error('checkpoint schedule error', { detail: String(err ?? m) }),
        debug: (m) => log.debug(String(m)),
      },
    });
  }

  /** Writes one checkpoint now (after any write under way); true when it was written. */
  write(reason: WriteReason): Promise<boolean> {
    const run = this.chain.then(() => this.writeOnce(reason));
    this.chain = run;
    return run;
  }

  /** Stops the schedule and waits for a write under way; write() still works after (the final checkpoint). */
  async stop(): Promise<void> {
    const task = this.task;
    this.task = undefined;
    if (task !== undefined) await task.destroy();
    await this.chain;
  }

  private async writeOnce(reason: WriteReason): Promise<boolean> {
    const { file, log } = this.opts;
    try {
      const state = await this.opts.take();
      writeCheckpointFile(file, state);
      this.writes.inc(['ok']);
      this.lastSuccess.set([], Date.now() / 1000);
      if (this.failing) log.info('checkpoint writes work again', { file });
      this.failing = false;
      if (reason === 'shutdown') log.info('final checkpoint written', { file, files: state.files.followed.length });
      return true;
    } catch (err) {
      this.writes.inc(['error']);
      if (!this.failing || reason === 'shutdown') log.error('checkpoint write failed', { file, reason, error: (err as Error).message });
      this.failing = true;
      return false;
    }
  }
}

/**
 * The checkpoint left by the previous run; undefined when there is none (no file, or an empty one), or
 * when a checkpoint of ours cannot be used (not whole JSON, or not of this version): that one is moved
 * aside to FILE.unusable (never over a file already there) and logged, and the exporter starts as if there
 * were none. A path holding anything that is not a checkpoint of ours (a user's file, a directory, a FIFO,
 * a device, a symlink) throws NotACheckpointError, with nothing there touched: a config error (exit 2).
 * Any other I/O error throws (exit 1).
 */
export function loadCheckpoint(file: string, log: Logger): Checkpoint | undefined {
  removeStaleTemporaries(file);
  let problem: string;
  try {
    const value = readCheckpointFile(file);
    if (value === undefined) {
      log.info('no checkpoint yet; starting fresh', { file });
      return undefined;
    }
    const decoded = decodeCheckpoint(value);
    if (decoded.ok) return decoded.checkpoint;
    problem = decoded.problem;
  } catch (err) {
    if (err instanceof NotACheckpointError) throw err;
    if (!(err instanceof SyntaxError)) throw new Error(`checkpoint.file ${file}: ${(err as Error).message}`);
    problem = `not JSON: ${err.message}`;
  }
  const aside = moveAside(file);
  log.error('checkpoint unusable; starting fresh (counters from zero, files from --tail.start-at)', { file, movedTo: aside ?? '(left in place)', problem });
  return undefined;
}
