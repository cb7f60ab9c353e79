// Writes checkpoints on a schedule (node-cron) and on demand (at shutdown), and reads the one left by the
// previous run. A write that fails is logged and counted, never fatal: the exporter keeps serving, and the
// previous checkpoint stays whole on disk (see checkpoint-file.ts).
import { renameSync } from 'node:fs';
import { schedule, type ScheduledTask } from 'node-cron';
import { CounterFamily, GaugeFamily } from '../metrics/families.js';
import type { Logger } from '../server/logger.js';
import { readCheckpointFile, removeStaleTemporaries, writeCheckpointFile } from './checkpoint-file.js';
import { decodeCheckpoint, type Checkpoint, type CheckpointJson } from './checkpoint-state.js';

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
  readonly writes = new CounterFamily(
    'zero_plane_exporter_checkpoint_writes_total',
    'Checkpoint writes (on checkpoint.schedule and at shutdown), by result (ok or error).',
    ['result'],
  );
  readonly lastSuccess = new GaugeFamily(
    'zero_plane_exporter_checkpoint_last_success_timestamp_seconds',
    'When a checkpoint was last written successfully (Unix time); absent until the first one.',
    [],
  );
  private task: ScheduledTask | undefined;
  /** The write under way, if any: writes never overlap. */
  private chain: Promise<unknown> = Promise.resolve();
  /** A failing streak is logged once when it starts and once when it ends, not at every attempt. */
  private failing = false;

  constructor(private readonly opts: CheckpointerOptions) {
    this.writes.touch(['ok']);
    this.writes.touch(['error']);
  }

  families() {
    return [this.writes, this.lastSuccess];
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
 * The checkpoint left by the previous run; undefined when there is none, or when it cannot be used (not
 * JSON, or not a checkpoint of this version): that one is moved aside to FILE.unusable and logged, and
 * the exporter starts as if there were none. An I/O error other than "no such file" throws (exit 1).
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
    if (!(err instanceof SyntaxError)) throw new Error(`checkpoint.file ${file}: ${(err as Error).message}`);
    problem = `not JSON: ${err.message}`;
  }
  const aside = `${file}.unusable`;
  try {
    renameSync(file, aside);
  } catch {
    // Left in place: the next write replaces it.
  }
  log.error('checkpoint unusable; starting fresh (counters from zero, files from --tail.start-at)', { file, movedTo: aside, problem });
  return undefined;
}
