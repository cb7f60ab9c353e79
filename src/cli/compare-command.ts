// `compare`: two groups' convergence radius with a bootstrap interval (src/history/compare.ts). A verdict
// or none, both exit 0: "equal within the interval" is an answer, not a failure.
import type { Config } from '../config/schema.js';
import { formatDuration, parseDuration } from '../config/duration.js';
import { BLOCK_MS } from '../history/timeline-bounds.js';
import { compareGroups, CompareUsageError, parseSelector, type CompareInput } from '../history/compare.js';
import { formatCompareText } from '../history/compare-output.js';
import { UsageError } from './flags.js';
import { inputHints } from './input-hints.js';
import { timelineExit } from './timeline-exit.js';
import { limitError, maxBlocks, MIN_STEP_MS } from './timeline-limits.js';

export interface CompareArgs {
  files: string[];
  format: string;
  a: string | undefined;
  b: string | undefined;
  window: string | undefined;
  iterations: string | undefined;
  seed: string | undefined;
  maxBlocks?: string;
  interrupt?: AbortSignal;
}

/** The longest window: a day (a window is one bootstrap unit; longer ones leave too few). */
const MAX_WINDOW_MS = 86_400_000;

export async function runCompare(config: Config, args: CompareArgs, out: (text: string) => void, hint: (text: string) => void, nowMs = Date.now()): Promise<number> {
  if (args.format !== 'json' && args.format !== 'text') throw new UsageError(`--format must be json or text, not "${args.format}"`);
  const input = compareInput(args);
  const windowMs = args.window === undefined ? config.pack.rateWindow : windowOf(args.window);
  const c = config.history.compare;
  const iterations = args.iterations === undefined ? c.iterations : wholeNumber('--iterations', args.iterations, 100, 1_000_000);
  const seed = args.seed === undefined ? c.seed : wholeNumber('--seed', args.seed, 0, 4_294_967_295);
  const blocks = maxBlocks(args.maxBlocks);
  const options = {
    windowMs,
    nowMs,
    minWindowHits: config.alerts.minRequests,
    minWindows: c.minWindows,
    iterations,
    confidence: c.confidence,
    seed,
    input: inputHints(hint, undefined),
    interrupt: args.interrupt,
    maxSpanMs: blocks * BLOCK_MS,
  };
  const result = await compareGroups(config, input, options).catch((err: unknown) => {
    if (err instanceof CompareUsageError) throw new UsageError(err.message);
    throw limitError('compare', err, blocks);
  });
  out(args.format === 'json' ? `${JSON.stringify(result, null, 2)}\n` : formatCompareText(result));
  return Math.max(...result.inputs.map((s) => timelineExit('compare', s, hint)));
}

function compareInput(args: CompareArgs): CompareInput {
  if (args.a === undefined && args.b === undefined) {
    if (args.files.length !== 2)
      throw new UsageError(`compare needs --a and --b (e.g. --a cohort=stable --b cohort=canary) over its FILEs, or exactly two FILEs to compare; got ${args.files.length} FILE(s) and no selector`);
    if (args.files[0] === args.files[1]) throw new UsageError(`compare: the two FILEs are the same (${args.files[0]})`);
    return { kind: 'files', a: args.files[0] as string, b: args.files[1] as string };
  }
  if (args.a === undefined || args.b === undefined) throw new UsageError(`compare needs both --a and --b (only ${args.a === undefined ? '--b' : '--a'} was given)`);
  if (args.files.length === 0) throw new UsageError('compare needs at least one FILE (or - for stdin) for --a and --b to select from');
  try {
    const a = parseSelector(args.a, '--a');
    const b = parseSelector(args.b, '--b');
    if (args.a === args.b) throw new CompareUsageError(`--a and --b select the same group (${args.a})`);
    return { kind: 'selectors', files: args.files, a, b };
  } catch (err) {
    if (err instanceof CompareUsageError) throw new UsageError(err.message);
    throw err;
  }
}

function windowOf(text: string): number {
  const ms = parseDuration(text);
  const range = `from ${formatDuration(MIN_STEP_MS)} to ${formatDuration(MAX_WINDOW_MS)}, in whole seconds`;
  if (ms === undefined || ms < MIN_STEP_MS || ms > MAX_WINDOW_MS || ms % 1000 !== 0) throw new UsageError(`--window: "${text}" is not a duration ${range}`);
  return ms;
}

function wholeNumber(flag: string, text: string, min: number, max: number): number {
  const n = Number(text);
  if (!/^\d+$/.test(text) || n < min || n > max) throw new UsageError(`${flag}: "${text}" is not a whole number from ${min} to ${max}`);
  return n;
}
