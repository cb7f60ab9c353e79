// Flags in the style of Prometheus exporters (`--config.file`, `--web.listen-address`, …). Each flag is
// declared once here: the parser and `--help` read the same table, so help never lies about a default.
import { parseArgs } from 'node:util';

export type Command = 'serve' | 'report' | 'backtest' | 'compare' | 'export' | 'generate' | 'demo' | 'simulate' | 'load' | 'probe';

export interface FlagSpec {
  name: string;
  type: 'string' | 'boolean';
  help: string;
  default?: string;
  /** May be given more than once; every value is kept, in order. */
  multiple?: boolean;
  commands: readonly Command[];
}

/** Every command, in the order the overview lists them (`serve` is the default). */
export const COMMANDS: readonly Command[] = ['serve', 'report', 'backtest', 'compare', 'export', 'generate', 'demo', 'simulate', 'load', 'probe'];
const ALL = COMMANDS;

/** Every flag; a name may appear once per command (`--format` has its own formats and default per command). */
export const FLAGS: readonly FlagSpec[] = [
  {
    name: 'config.file',
    type: 'string',
    help: 'YAML config file (docs/configuration.md); without it the built-in defaults apply.',
    commands: ['serve', 'report', 'backtest', 'compare', 'export', 'generate', 'demo', 'probe'],
  },
  {
    name: 'web.listen-address',
    type: 'string',
    help: 'Address to listen on for the web interface and telemetry; repeat the flag to listen on several (each is bound).',
    default: ':9185',
    multiple: true,
    commands: ['serve', 'demo'],
  },
  {
    name: 'web.systemd-socket',
    type: 'boolean',
    help: 'Use the listening sockets systemd passed (socket activation: LISTEN_FDS, from descriptor 3) instead of --web.listen-address.',
    commands: ['serve'],
  },
  {
    name: 'web.config.file',
    type: 'string',
    help: 'Web config file (format of the Prometheus exporter toolkit): tls_server_config for HTTPS, basic_auth_users (bcrypt) on every endpoint; none = plain HTTP, no auth.',
    commands: ['serve', 'demo'],
  },
  { name: 'web.telemetry-path', type: 'string', help: 'Path under which to expose metrics.', default: '/metrics', commands: ['serve', 'demo'] },
  {
    name: 'demo.simulator-address',
    type: 'string',
    help: "Address the demo's simulated LLM endpoint listens on (POST /v1/messages, /admin/faults). Default: 127.0.0.1 on a free port.",
    commands: ['demo'],
  },
  {
    name: 'web.max-requests',
    type: 'string',
    help: 'Maximum number of parallel scrape requests; past it a scrape gets 503. 0 disables the limit. Overrides web.maxRequests.',
    default: '40',
    commands: ['serve', 'demo'],
  },
  {
    name: 'web.probe-listen-address',
    type: 'string',
    help: 'Also listen here for /-/healthy and /-/ready only, answered by a thread of their own so a scrape flood does not delay them (point the kubelet at it). Overrides web.probeListenAddress; unset = none.',
    commands: ['serve', 'demo'],
  },
  { name: 'demo.rate', type: 'string', help: 'Requests per second the demo load generator sends to the simulator.', default: '20', commands: ['demo'] },
  { name: 'simulate.listen-address', type: 'string', help: 'Address the simulated LLM endpoint (POST /v1/messages) listens on.', default: '127.0.0.1:8787', commands: ['simulate'] },
  { name: 'simulate.mode', type: 'string', help: 'Throttle mode of the simulated layer: strict (429 on long contexts), balanced or adaptive.', default: 'balanced', commands: ['simulate'] },
  {
    name: 'simulate.stream',
    type: 'boolean',
    help: 'Stream mode: the standard layer answers "stream": true with Anthropic\'s server-sent events; opted-in streams still get the 400 (Zero-Plane does not stream).',
    commands: ['simulate'],
  },
  { name: 'simulate.first-event-delay-ms', type: 'string', help: 'Stream mode: ms between the response headers and the first event.', default: '0', commands: ['simulate'] },
  { name: 'simulate.fast-latency-ms', type: 'string', help: 'Mean latency of the fast layer in ms (jitter ±5 ms); 180 gives a p99 near the 185 ms baseline.', default: '120', commands: ['simulate'] },
  { name: 'load.target', type: 'string', help: 'Base URL of the endpoint to drive (the simulator, or any compatible one).', default: 'http://127.0.0.1:8787', commands: ['load'] },
  { name: 'load.rate', type: 'string', help: 'Requests per second.', default: '20', commands: ['load'] },
  { name: 'load.out', type: 'string', help: 'Gateway log to append one JSON line per round trip to.', default: 'gateway.log', commands: ['load'] },
  { name: 'load.duration', type: 'string', help: 'Stop after this long (e.g. 30s); unset = until SIGTERM/SIGINT.', commands: ['load'] },
  { name: 'seed', type: 'string', help: 'Seed of the random choices, for a repeatable run.', commands: ['demo', 'simulate', 'load'] },
  { name: 'seed', type: 'string', help: "Seed of the bootstrap's resampling: the same input and seed give the same interval. Overrides history.compare.seed.", commands: ['compare'] },
  {
    name: 'checkpoint.file',
    type: 'string',
    help: 'Save counters and file offsets here (on checkpoint.schedule and at shutdown) and resume from them at start; overrides checkpoint.file.',
    commands: ['serve'],
  },
  {
    name: 'gate.scope',
    type: 'string',
    help: "A label the gate's pause alerts must carry, added to gate.scope; repeat for more (the Kubernetes set passes namespace and cluster this way).",
    multiple: true,
    commands: ['serve'],
  },
  { name: 'tail.start-at', type: 'string', help: 'Where to start in files that already exist: end (new lines only) or start.', default: 'end', commands: ['serve'] },
  {
    name: 'parse.workers',
    type: 'string',
    help: 'Worker threads that parse the followed files and hand counts to the thread answering /metrics (patterns are shared out among them); 0 parses on that thread. Overrides parse.workers (default 1).',
    commands: ['serve'],
  },
  { name: 'log.level', type: 'string', help: 'Only log messages with this severity or above: debug, info, warn, error.', default: 'info', commands: ALL },
  { name: 'log.format', type: 'string', help: 'Log format on stderr: json (one object per line) or logfmt (key=value, as Prometheus writes).', default: 'json', commands: ALL },
  { name: 'format', type: 'string', help: 'Output format: text or json.', default: 'text', commands: ['report'] },
  { name: 'format', type: 'string', help: 'Output format: text (the per-step table, then what fired when), json, or csv (the per-step table only).', default: 'text', commands: ['backtest'] },
  { name: 'format', type: 'string', help: 'Output format: text (the method, both groups, b against a, the verdict) or json.', default: 'text', commands: ['compare'] },
  {
    name: 'a',
    type: 'string',
    help: 'Group a: LABEL=VALUE[,LABEL=VALUE] over cohort, model, route (cohort= for records without one). Without --a and --b, the two FILEs are the groups.',
    commands: ['compare'],
  },
  { name: 'b', type: 'string', help: 'Group b, compared against a: the same form as --a.', commands: ['compare'] },
  {
    name: 'window',
    type: 'string',
    help: "The windows the groups are cut into, end to end on the log's own timeline (each is one unit of the bootstrap), whole seconds up to 1d. Default: pack.rateWindow (backtest's).",
    commands: ['compare'],
  },
  { name: 'iterations', type: 'string', help: 'Resamples of the bootstrap (100 to 1000000). Overrides history.compare.iterations.', commands: ['compare'] },
  { name: 'format', type: 'string', help: 'Output format: openmetrics (for promtool tsdb create-blocks-from openmetrics).', default: 'openmetrics', commands: ['export'] },
  { name: 'format', type: 'string', help: 'Output format: text or json (one object).', default: 'text', commands: ['probe'] },
  { name: 'module', type: 'string', help: 'The probe.modules entry to probe with; may be left out when only one is configured.', commands: ['probe'] },
  {
    name: 'format',
    type: 'string',
    help: "files (every part, into the directories below) or sloth (the pack's SLOs as a Sloth prometheus/v1 spec, on stdout; nothing written).",
    default: 'files',
    commands: ['generate'],
  },
  {
    name: 'step',
    type: 'string',
    help: "Evaluation step on the log's timeline, whole seconds from 1s to pack.rateWindow; must divide pack.rateWindow and every SLO window. Default: pack.evaluationInterval (30s unless configured).",
    commands: ['backtest'],
  },
  {
    name: 'step',
    type: 'string',
    help: "Scrape step: the counters are written as scraped every this long, whole seconds from 1s to 5m (Prometheus' lookback delta); it should divide pack.evaluationInterval and pack.rateWindow.",
    default: '15s',
    commands: ['export'],
  },
  {
    name: 'out',
    type: 'string',
    help: "Write one OpenMetrics file per 2 h block (the TSDB's block size) into this directory instead of one exposition on stdout: much faster to backfill a long span.",
    commands: ['export'],
  },
  {
    name: 'label',
    type: 'string',
    help: 'A target label NAME=VALUE on every series, as the scrape would add it; repeat for more. job and instance default to the job in pack.selector (else zero-plane-exporter) and "backfill".',
    multiple: true,
    commands: ['export'],
  },
  {
    name: 'label',
    type: 'string',
    help: 'A target label NAME=VALUE of the series backtested, as `export --label` writes it (the same labels sum in the same order, to the last bit); those in pack.aggregationLabels name the group on every alert. Repeat for more.',
    multiple: true,
    commands: ['backtest'],
  },
  {
    name: 'compare-naive',
    type: 'boolean',
    help: 'Also evaluate a naive alert on mean latency (history.naive: above 1.1 × the baseline for 5m) and print how many minutes before it the P0 and the warm-up alerts fired.',
    commands: ['backtest'],
  },
  {
    name: 'max-blocks',
    type: 'string',
    help: 'Refuse (exit 2) a timeline longer than this many 2 h blocks (the files --out writes): a stale clock would otherwise stretch it over years.',
    default: '1200',
    commands: ['backtest', 'compare', 'export'],
  },
  {
    name: 'max-scratch',
    type: 'string',
    help: 'Refuse (exit 2) an export to stdout whose scratch file under TMPDIR would grow past this size (512MiB, 4GiB, …); --out needs none.',
    default: '4GiB',
    commands: ['export'],
  },
  { name: 'fail-on', type: 'string', help: 'Exit 3 when this condition holds: P0, or comma-separated alert names.', commands: ['report'] },
  { name: 'by', type: 'string', help: 'Also print the signals per group of this record label: cohort, model or route (bounded like the metric labels).', commands: ['report'] },
  {
    name: 'out.root',
    type: 'string',
    help: 'Directory under which alerts/, dashboards/, deploy/ and mixin/ are written (each flag below, when given, wins for its part).',
    default: '.',
    commands: ['generate'],
  },
  {
    name: 'out',
    type: 'string',
    help: 'Directory to write the alerting pack to. Given alone it is refused: the other parts would land in the current directory.',
    default: 'alerts',
    commands: ['generate'],
  },
  { name: 'dashboards.out', type: 'string', help: 'Directory to write the Grafana dashboards, provisioning files and ConfigMaps to.', default: 'dashboards', commands: ['generate'] },
  { name: 'deploy.out', type: 'string', help: 'Directory to write the deployment files to: Kubernetes manifests with kustomization, systemd units.', default: 'deploy', commands: ['generate'] },
  {
    name: 'mixin.out',
    type: 'string',
    help: 'Directory of the jsonnet mixin: its generated/ part (rules, alerts, dashboards with _config tokens) is written there.',
    default: 'mixin',
    commands: ['generate'],
  },
  { name: 'help', type: 'boolean', help: 'Show this help.', commands: ALL },
  { name: 'version', type: 'boolean', help: 'Show the version.', commands: ALL },
];

export class UsageError extends Error {}

export interface ParsedFlags {
  command: Command;
  values: Record<string, string | boolean | string[] | undefined>;
  positionals: string[];
}

export function parseFlags(command: Command, args: string[]): ParsedFlags {
  const options: Record<string, { type: 'string' | 'boolean'; short?: string; multiple?: boolean }> = {};
  for (const f of FLAGS) {
    if (!f.commands.includes(command)) continue;
    options[f.name] = { type: f.type, ...(f.name === 'help' ? { short: 'h' } : {}), ...(f.multiple === true ? { multiple: true } : {}) };
  }
  try {
    const { values, positionals } = parseArgs({ args, options, allowPositionals: true, strict: true });
    return { command, values: values as ParsedFlags['values'], positionals };
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

/** A single-valued flag's value, or its default; for a repeatable one, the last value given. */
export function flagString(flags: ParsedFlags, name: string): string | undefined {
  const v = flags.values[name];
  if (Array.isArray(v)) return v.at(-1);
  if (v !== undefined) return String(v);
  return FLAGS.find((f) => f.name === name && f.commands.includes(flags.command))?.default;
}

/** Every value of a repeatable flag, in order; undefined when it was not given. */
export function flagStrings(flags: ParsedFlags, name: string): string[] | undefined {
  const v = flags.values[name];
  if (v === undefined) return undefined;
  return Array.isArray(v) ? v : [String(v)];
}

const USAGE: Record<Command, string> = {
  serve: 'usage: zero-plane-exporter [serve] [flags] [FILE|GLOB|-]...\n\nFollows gateway logs (files and globs as they grow, - for stdin) and serves the Zero-Plane signals to Prometheus.',
  backtest:
    "usage: zero-plane-exporter backtest [flags] FILE...\n\nReplays gateway logs (any order of files, gzip, - for stdin; pipes, FIFOs and <(cmd) too) on their own timeline and evaluates the pack's alerts at every step,\nwith the rules' windows, thresholds, for: durations and traffic guards: when each alert would have fired, and the first P0.\nRecords without a time, far-out times and records later than history.lateness are skipped and counted.\nExit codes: 0 done, 1 runtime failure or no line became a record on the timeline, 2 bad usage or config, 141 the output pipe closed, 143/130 stopped by SIGTERM/SIGINT.",
  compare:
    "usage: zero-plane-exporter compare [flags] --a LABEL=VALUE --b LABEL=VALUE FILE...\n       zero-plane-exporter compare [flags] FILE_A FILE_B\n\nCompares two groups of requests on their convergence radius: b against a, the sigma of per-window p99 drift and the latency sigma,\neach with a seeded bootstrap interval over backtest's windows (pack.rateWindow, end to end). Never a t-test. The mean is shown, never decides.\nExit codes: 0 done (a verdict or none), 1 runtime failure or no line became a record on the timeline, 2 bad usage or config (a selector that matches nothing), 143/130 stopped by SIGTERM/SIGINT.",
  export:
    "usage: zero-plane-exporter export --format openmetrics [flags] FILE...\n\nReplays gateway logs on their own timeline and writes the exporter's counters and histograms as they would have been scraped\nat every step, with timestamps, every series from the first step: for promtool tsdb create-blocks-from openmetrics OUT DIR.\nExit codes: 0 done, 1 runtime failure or no line became a record on the timeline, 2 bad usage or config, 141 the output pipe closed, 143/130 stopped by SIGTERM/SIGINT.",
  report:
    'usage: zero-plane-exporter report [flags] FILE...\n\nReads gateway logs to their end (gzip read transparently, - for stdin; pipes, FIFOs and <(cmd) too) and prints the signals over all of them.\nThe log format is detected per file (nginx, Envoy, Caddy, HAProxy, Kong, Traefik, default) unless input.preset names one.\nExit codes: 0 done, 1 runtime failure or no line became a record, 2 bad usage or config, 3 the --fail-on condition held, 143/130 stopped by SIGTERM/SIGINT.',
  generate:
    "usage: zero-plane-exporter generate [flags]\n\nWrites the alerting pack (Prometheus rules, PrometheusRule, example Alertmanager config), the Grafana dashboards and the jsonnet mixin's generated part from the config.",
  demo: 'usage: zero-plane-exporter demo [flags]\n\nRuns the simulator, a load generator and the exporter together: live signals at http://localhost:9185/ with no config.',
  simulate: 'usage: zero-plane-exporter simulate [flags]\n\nServes a simulated Zero-Plane LLM endpoint (POST /v1/messages) with fault injection on /admin/faults.',
  load: 'usage: zero-plane-exporter load [flags]\n\nSends requests to an LLM endpoint at a steady rate and writes the gateway log of the round trips.',
  probe:
    "usage: zero-plane-exporter probe [flags] [TARGET]\n\nSends one minimal /v1/messages request (max_tokens 1, the exact opt-in header) through the Anthropic SDK to TARGET (default: the module's baseURL)\nand prints whether the Zero-Plane layer answered, with the delay profile, downgrade reason and HTTP status (docs/probe.md).\nExit codes: 0 served by Zero-Plane, 1 no answer (timeout, refused) or runtime failure, 2 bad usage or config (no key file, unknown module, target not allowed), 3 answered but not by Zero-Plane (or an error status, or degraded with failIfDegraded).",
};

/** What a flag's value is, as help shows it (`--config.file=FILE`); unlisted string flags show VALUE. */
const VALUE_NAMES: Record<string, string> = {
  'config.file': 'FILE',
  'web.config.file': 'FILE',
  'checkpoint.file': 'FILE',
  'web.listen-address': 'ADDR',
  'simulate.listen-address': 'ADDR',
  'demo.simulator-address': 'ADDR',
  'web.telemetry-path': 'PATH',
  'load.target': 'URL',
  'load.out': 'FILE',
  'load.duration': 'DURATION',
  step: 'DURATION',
  'demo.rate': 'RATE',
  'load.rate': 'RATE',
  'simulate.fast-latency-ms': 'MS',
  'simulate.first-event-delay-ms': 'MS',
  'simulate.mode': 'MODE',
  seed: 'INT',
  'tail.start-at': 'end|start',
  'log.level': 'LEVEL',
  'log.format': 'FORMAT',
  format: 'FORMAT',
  'fail-on': 'CONDITION',
  by: 'cohort|model|route',
  a: 'LABEL=VALUE',
  b: 'LABEL=VALUE',
  window: 'DURATION',
  iterations: 'INT',
  module: 'NAME',
  label: 'NAME=VALUE',
  'gate.scope': 'LABEL=VALUE',
  out: 'DIR',
  'out.root': 'DIR',
  'dashboards.out': 'DIR',
  'deploy.out': 'DIR',
  'mixin.out': 'DIR',
};

/** One line per command, for the overview. */
const SUMMARY: Record<Command, string> = {
  serve: 'Follow gateway logs and serve the Zero-Plane signals to Prometheus',
  report: 'Read gateway logs to their end and print the signals over all of them',
  backtest: "Replay logs on their own timeline and show when the pack's alerts would have fired",
  compare: 'Compare two groups (cohorts, models, routes, or two logs) on their convergence radius, with a bootstrap interval',
  export: "Write the counters as scraped over a log's timeline, for promtool backfill",
  generate: 'Write the alerting pack, dashboards, mixin and deployment files from the config',
  demo: 'Run simulator, load and exporter together: live signals on :9185 with no config',
  simulate: 'Serve a simulated Zero-Plane LLM endpoint with fault injection',
  load: 'Send requests at a steady rate and write the gateway log of the round trips',
  probe: 'Send one max_tokens 1 request and say whether Zero-Plane answered (for CI; serve has /probe)',
};

/** Help lines are wrapped to this width. */
const HELP_WIDTH = 100;

/** One command's usage, its one-line summary (the overview's), and its flags, aligned. */
export function helpText(command: Command): string {
  const specs = FLAGS.filter((f) => f.commands.includes(command));
  const lefts = specs.map((f) => `  --${f.name}${f.type === 'string' ? `=${VALUE_NAMES[f.name] ?? 'VALUE'}` : ''}${f.multiple === true ? ' ...' : ''}`);
  const column = Math.max(...lefts.map((l) => l.length)) + 2;
  const rows = specs.map((f, i) => {
    const text = `${f.help}${f.default !== undefined ? ` (default: ${f.default})` : ''}`;
    return wrap(text, HELP_WIDTH - column)
      .map((line, j) => (j === 0 ? (lefts[i] as string).padEnd(column) : ' '.repeat(column)) + line)
      .join('\n');
  });
  return `${USAGE[command]}\n\nFlags:\n${rows.join('\n')}\n`;
}

/** `zero-plane-exporter --help` and `help`: every command with one line, then the default command's flags. */
export function overviewText(): string {
  const column = Math.max(...COMMANDS.map((c) => c.length)) + 4;
  const rows = COMMANDS.map((c) => `  ${c.padEnd(column - 2)}${SUMMARY[c]}${c === 'serve' ? ' (the default command)' : ''}`);
  return [
    'usage: zero-plane-exporter COMMAND [flags] [ARGS]...',
    '       zero-plane-exporter help [COMMAND]',
    '',
    'Commands:',
    ...rows,
    `  ${'help'.padEnd(column - 2)}Show this overview, or one command's flags (help COMMAND, or COMMAND --help)`,
    '',
    'With no command, or a first word that is a file, glob, - or a flag, the command is serve.',
    '',
    helpText('serve'),
  ].join('\n');
}

function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line !== '' && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  lines.push(line);
  return lines;
}
