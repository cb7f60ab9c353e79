// The file follower's options from the config: the same whether `serve` follows on its serving thread or
// in a parse worker.
import type { Config } from '../config/schema.js';
import type { FollowOptions, ResumeFrom } from '../source/file-follower.js';

export function followOptionsOf(config: Config, resume: ResumeFrom | undefined): FollowOptions {
  const s = config.sources;
  return {
    patterns: s.files,
    maxLineBytes: config.input.maxLineBytes,
    envelope: config.input.envelope,
    pollIntervalMs: s.pollInterval,
    startAt: s.startAt,
    maxOpenFiles: s.maxOpenFiles,
    watch: s.watch,
    rescanIntervalMs: s.rescanInterval,
    ...(resume === undefined ? {} : { resume }),
  };
}
