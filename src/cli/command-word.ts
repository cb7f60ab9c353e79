// The first word of the command line: a command, `help [COMMAND]`, or the first input of the default
// command (`serve`). A word that is none of these is a usage error with a suggestion: a typo such as
// `reprot x.log` must not start a server that retries a file named "reprot" for ever.
import { existsSync } from 'node:fs';
import { COMMANDS, UsageError, type Command } from './flags.js';

export type CommandLine =
  /** Run `command` with `args`. */
  | { kind: 'run'; command: Command; args: string[] }
  /** Print help: the overview (`command` undefined) or one command's. */
  | { kind: 'help'; command: Command | undefined };

/** Characters that make a word a glob pattern (fast-glob's), so a path to follow even before it exists. */
const GLOB_MAGIC = /[*?[\]{}()!]/;

export function resolveCommandLine(argv: readonly string[]): CommandLine {
  const [first, ...rest] = argv;
  if (first === undefined) return { kind: 'run', command: 'serve', args: [] };
  const named = COMMANDS.find((c) => c === first);
  if (named !== undefined) return { kind: 'run', command: named, args: rest };
  if (first === 'help') {
    const [topic, ...extra] = rest;
    if (extra.length > 0) throw new UsageError(`help takes at most one command, got ${rest.join(' ')}`);
    if (topic === undefined) return { kind: 'help', command: undefined };
    const command = COMMANDS.find((c) => c === topic);
    if (command === undefined) throw new UsageError(unknownWord(topic, 'help'));
    return { kind: 'help', command };
  }
  if (first.startsWith('-') || looksLikePath(first)) return { kind: 'run', command: 'serve', args: [...argv] };
  throw new UsageError(unknownWord(first, undefined));
}

/** A flag, stdin, an existing file, or a word only a path would be (a directory part, a glob). */
function looksLikePath(word: string): boolean {
  return word.includes('/') || GLOB_MAGIC.test(word) || existsSync(word);
}

function unknownWord(word: string, after: 'help' | undefined): string {
  const near = closest(word);
  const lines = [`unknown command "${word}"${after === undefined ? ' (and no file of that name)' : ''}.`];
  if (near !== undefined) lines.push(`Did you mean "${near}"?`);
  lines.push(`Commands: ${COMMANDS.join(', ')}, help.`);
  if (after === undefined) lines.push(`To follow a file that does not exist yet, name the command: zero-plane-exporter serve ${word}`);
  return lines.join('\n');
}

/** The command nearest to `word` by edit distance, if near enough to be a typo of it. */
function closest(word: string): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const c of [...COMMANDS, 'help']) {
    const d = editDistance(word.toLowerCase(), c);
    if (d < bestDistance) [best, bestDistance] = [c, d];
  }
  // A third of the letters (at least one, at most three) may be wrong; a swap counts as one.
  return bestDistance <= Math.min(3, Math.max(1, Math.floor(word.length / 3))) ? best : undefined;
}

/** Optimal string alignment distance: insertions, deletions, substitutions and adjacent swaps. */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const row = d[i] as number[];
      const up = d[i - 1] as number[];
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      row[j] = Math.min((up[j] as number) + 1, (row[j - 1] as number) + 1, (up[j - 1] as number) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) row[j] = Math.min(row[j] as number, ((d[i - 2] as number[])[j - 2] as number) + 1);
    }
  }
  return (d[a.length] as number[])[b.length] as number;
}
