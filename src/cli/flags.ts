// Flags in the style of Prometheus exporters (`--config.file`, `--web.listen-address`, …). Each flag is
// declared once here: the parser and `--help` read the same table, so help never lies about a default.
import { parseArgs } from 'node:util';

export type Command = 'serve' | 'report' | 'generate';

export interface FlagSpec {
  name: string;
  type: 'string' | 'boolean';
  help: string;
  default?: string;
  commands: readonly Command[];
}

export const FLAGS: readonly FlagSpec[] = [
  { name: 'config.file', type: 'string', help: 'YAML config file; without it the built-in defaults of SPEC apply.', commands: ['serve', 'report', 'generate'] },
  { name: 'web.listen-address', type: 'string', help: 'Address to listen on for the web interface and telemetry.', default: ':9185', commands: ['serve'] },
  { name: 'web.telemetry-path', type: 'string', help: 'Path under which to expose metrics.', default: '/metrics', commands: ['serve'] },
  { name: 'tail.start-at', type: 'string', help: 'Where to start in files that already exist: end (new lines only) or start.', default: 'end', commands: ['serve'] },
  { name: 'log.level', type: 'string', help: 'Only log messages with this severity or above: debug, info, warn, error.', default: 'info', commands: ['serve', 'report', 'generate'] },
  { name: 'format', type: 'string', help: 'Output format: text or json.', default: 'text', commands: ['report'] },
  { name: 'fail-on', type: 'string', help: 'Exit 3 when this condition holds: P0, or comma-separated alert names.', commands: ['report'] },
  { name: 'out', type: 'string', help: 'Directory to write the alerting pack to.', default: 'alerts', commands: ['generate'] },
  { name: 'help', type: 'boolean', help: 'Show this help.', commands: ['serve', 'report', 'generate'] },
  { name: 'version', type: 'boolean', help: 'Show the version.', commands: ['serve', 'report', 'generate'] },
];

export class UsageError extends Error {}

export interface ParsedFlags {
  values: Record<string, string | boolean | undefined>;
  positionals: string[];
}

export function parseFlags(command: Command, args: string[]): ParsedFlags {
  const options: Record<string, { type: 'string' | 'boolean'; short?: string }> = {};
  for (const f of FLAGS) if (f.commands.includes(command)) options[f.name] = f.name === 'help' ? { type: f.type, short: 'h' } : { type: f.type };
  try {
    const { values, positionals } = parseArgs({ args, options, allowPositionals: true, strict: true });
    return { values: values as Record<string, string | boolean | undefined>, positionals };
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

export function flagString(flags: ParsedFlags, name: string): string | undefined {
  const v = flags.values[name];
  if (v !== undefined) return String(v);
  return FLAGS.find((f) => f.name === name)?.default;
}

export function helpText(command: Command): string {
  const usage =
    command === 'generate'
      ? 'usage: zero-plane-exporter generate [flags]\n\nWrites the alerting pack (Prometheus rules, PrometheusRule, example Alertmanager config) from the config.'
      : command === 'serve'
      ? 'usage: zero-plane-exporter [serve] [flags] [FILE|GLOB|-]...\n\nFollows gateway logs (files and globs as they grow, - for stdin) and serves the Zero-Plane signals to Prometheus.'
      : 'usage: zero-plane-exporter report [flags] FILE...\n\nReads gateway logs to their end (gzip read transparently, - for stdin) and prints the signals over all of them.\nExit codes: 0 done, 1 runtime failure, 2 bad usage or config, 3 the --fail-on condition held.';
  const rows = FLAGS.filter((f) => f.commands.includes(command)).map((f) => {
    const left = `  --${f.name}${f.type === 'string' ? '=VALUE' : ''}`;
    return `${left.padEnd(30)}${f.help}${f.default !== undefined ? ` (default: ${f.default})` : ''}`;
  });
  return `${usage}\n\nFlags:\n${rows.join('\n')}\n`;
}
