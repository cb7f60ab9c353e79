// The command line: a thin shell that parses flags, loads the config and runs one command. Each command's
// modules are imported only when it runs: `report` must not pay for express, the simulator or the
// dashboards SDK (0.4 s and ~20 MiB before the first line, measured in bench/RESULTS.md).
import { join } from 'node:path';
import { ConfigError } from '../config/config-error.js';
import { parseDuration } from '../config/duration.js';
import { readDefaultConfig } from '../config/default-config.js';
import type { Config } from '../config/schema.js';
import { parseListenAddress } from '../config/listen-address.js';
import { createLogger, LOG_FORMATS, type LogFormat, type Logger, type LogLevel } from '../server/logger.js';
import type { WebConfig } from '../server/web-config.js';
import { resolveCommandLine } from './command-word.js';
import { flagString, flagStrings, helpText, overviewText, parseFlags, UsageError, type Command, type ParsedFlags } from './flags.js';
import { VERSION } from './version.js';
import { limitHeap } from './heap-limits.js';

const LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error'];

export async function main(argv: string[]): Promise<number> {
  let line;
  try {
    line = resolveCommandLine(argv);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`zero-plane-exporter: ${err.message}\n`);
    return 2;
  }
  if (line.kind === 'help') {
    process.stdout.write(line.command === undefined ? overviewText() : helpText(line.command));
    return 0;
  }
  const { command, args } = line;
  // Handlers go in before anything starts, so a signal during start-up is still a clean shutdown.
  const signalled = new Promise<string>((resolve) => {
    process.once('SIGTERM', () => resolve('SIGTERM'));
    process.once('SIGINT', () => resolve('SIGINT'));
  });
  try {
    const flags = parseFlags(command, args);
    if (flags.values.help) {
      // Without a command word, --help is the overview of every command.
      process.stdout.write(argv[0] === command ? helpText(command) : overviewText());
      return 0;
    }
    if (flags.values.version) {
      process.stdout.write(`zero-plane-exporter ${VERSION}\n`);
      return 0;
    }
    const level = flagString(flags, 'log.level') as LogLevel;
    if (!LEVELS.includes(level)) throw new UsageError(`--log.level must be one of ${LEVELS.join(', ')}`);
    const format = flagString(flags, 'log.format') as LogFormat;
    if (!LOG_FORMATS.includes(format)) throw new UsageError(`--log.format must be one of ${LOG_FORMATS.join(', ')}`);
    const log = createLogger(level, undefined, format);
    // Before the config and the command's modules load: loading them alone would grow the young generation past its cap.
    limitHeap({ oneShot: command === 'report' || command === 'backtest' || command === 'compare' || command === 'export', headroom: command === 'serve' || command === 'demo' }, (text) =>
      log.warn(text),
    );
    // The YAML parser and zod are loaded only for a config file (`report` on the defaults pays for neither).
    const configFile = flagString(flags, 'config.file');
    const config = configFile === undefined ? await readDefaultConfig() : (await import('../config/load.js')).loadConfig(configFile);
    const until = async (stop: () => Promise<void>, failed?: Promise<Error>) => {
      const end = await Promise.race([signalled.then((signal) => ({ signal })), ...(failed === undefined ? [] : [failed.then((error) => ({ error }))])]);
      if ('signal' in end) log.info('shutting down', { signal: end.signal });
      await stop();
      return 'signal' in end ? 0 : 1;
    };

    switch (command) {
      case 'report': {
        const { runReport } = await import('./report-command.js');
        return await oneShot(command, 'report interrupted; nothing printed', signalled, log, (interrupt) =>
          runReport(
            config,
            { files: flags.positionals, format: flagString(flags, 'format') as string, failOn: flagString(flags, 'fail-on'), by: flagString(flags, 'by') },
            (text) => process.stdout.write(text),
            log,
            (text) => process.stderr.write(text),
            interrupt,
          ),
        );
      }
      case 'backtest': {
        const [{ runBacktest }, { outputStream }] = await Promise.all([import('./backtest-command.js'), import('./output-stream.js')]);
        return await oneShot(command, 'backtest interrupted', signalled, log, (interrupt) =>
          runBacktest(
            config,
            {
              files: flags.positionals,
              format: flagString(flags, 'format') as string,
              step: flagString(flags, 'step'),
              labels: flagStrings(flags, 'label'),
              compareNaive: flags.values['compare-naive'] === true,
              maxBlocks: flagString(flags, 'max-blocks'),
              interrupt,
            },
            outputStream(process.stdout),
            (text) => process.stderr.write(text),
          ),
        );
      }
      case 'compare': {
        const { runCompare } = await import('./compare-command.js');
        return await oneShot(command, 'compare interrupted; nothing printed', signalled, log, (interrupt) =>
          runCompare(
            config,
            {
              files: flags.positionals,
              format: flagString(flags, 'format') as string,
              a: flagString(flags, 'a'),
              b: flagString(flags, 'b'),
              window: flagString(flags, 'window'),
              iterations: flagString(flags, 'iterations'),
              seed: flagString(flags, 'seed'),
              maxBlocks: flagString(flags, 'max-blocks'),
              interrupt,
            },
            (text) => process.stdout.write(text),
            (text) => process.stderr.write(text),
          ),
        );
      }
      case 'export': {
        const [{ runExport }, { outputStream }] = await Promise.all([import('./export-command.js'), import('./output-stream.js')]);
        return await oneShot(command, 'export interrupted', signalled, log, (interrupt) =>
          runExport(
            config,
            {
              files: flags.positionals,
              format: flagString(flags, 'format') as string,
              step: flagString(flags, 'step') as string,
              out: flagString(flags, 'out'),
              labels: flagStrings(flags, 'label'),
              maxBlocks: flagString(flags, 'max-blocks'),
              maxScratch: flagString(flags, 'max-scratch'),
              interrupt,
            },
            outputStream(process.stdout),
            (text) => process.stderr.write(text),
          ),
        );
      }
      case 'generate': {
        noPositionals(flags, command);
        const format = flagString(flags, 'format');
        if (format === 'sloth') {
          const { renderSlothSpec } = await import('../pack/sloth-spec.js');
          process.stdout.write(renderSlothSpec(config));
          return 0;
        }
        if (format !== 'files') throw new UsageError(`--format must be files or sloth, not "${format}"`);
        const [{ makeOutDir, writeFiles }, { renderPack }, { renderDashboards }, { renderMixin }, { renderDeploy }] = await Promise.all([
          import('./write-files.js'),
          import('../pack/render-pack.js'),
          import('../dashboards/render-dashboards.js'),
          import('../mixin/render-mixin.js'),
          import('../deploy/render-deploy.js'),
        ]);
        const outputs: [Map<string, string>, string][] = [
          [renderPack(config), 'out'],
          [renderDashboards(config), 'dashboards.out'],
          [renderMixin(config), 'mixin.out'],
          [renderDeploy(config), 'deploy.out'],
        ];
        const dirs = generateDirs(
          flags,
          outputs.map(([, flag]) => flag),
        );
        // Every directory first: a file in the way of one stops the command before it writes anything.
        for (const [, flag] of outputs) makeOutDir(dirs.get(flag) as string, flag);
        for (const [files, flag] of outputs) for (const path of writeFiles(files, dirs.get(flag) as string)) log.info('wrote', { path });
        return 0;
      }
      case 'serve': {
        const { startServe } = await import('./serve-command.js');
        const server = await startServe(withServeFlags(config, flags), log, { ...(await webConfigOf(flags, config)), systemdSocket: flags.values['web.systemd-socket'] === true });
        return await until(() => server.stop(), server.failed);
      }
      case 'demo': {
        noPositionals(flags, command);
        const { startDemo } = await import('./demo-command.js');
        // Loaded before the demo starts anything, so a bad file exits 2 with nothing left running.
        const simulatorText = flagString(flags, 'demo.simulator-address');
        const simulatorAddress = simulatorText === undefined ? {} : { simulatorAddress: listenAddress(simulatorText, 'demo.simulator-address') };
        const demo = await startDemo(
          withServeFlags(config, flags),
          { ratePerSecond: positiveNumber(flags, 'demo.rate'), ...seedOf(flags), ...simulatorAddress, ...(await webConfigOf(flags, config)) },
          log,
        );
        return await until(() => demo.stop());
      }
      case 'simulate': {
        noPositionals(flags, command);
        const at = listenAddress(flagString(flags, 'simulate.listen-address') as string, 'simulate.listen-address');
        const mode = flagString(flags, 'simulate.mode');
        if (mode !== 'strict' && mode !== 'balanced' && mode !== 'adaptive') throw new UsageError('--simulate.mode must be strict, balanced or adaptive');
        const { startSimulator } = await import('../simulate/simulator.js');
        const simulator = await startSimulator({
          ...(at.host === undefined ? {} : { host: at.host }),
          port: at.port,
          mode,
          fastLatency: { meanMs: positiveNumber(flags, 'simulate.fast-latency-ms') },
          stream: { enabled: flags.values['simulate.stream'] === true, firstEventDelayMs: nonNegativeNumber(flags, 'simulate.first-event-delay-ms') },
          ...seedOf(flags),
        });
        log.info('simulating', { messages: `${simulator.url}/v1/messages`, faults: `${simulator.url}/admin/faults` });
        return await until(() => simulator.close());
      }
      case 'load':
        noPositionals(flags, command);
        return await runLoad(flags, log, signalled);
      case 'probe': {
        const { runProbe } = await import('./probe-command.js');
        return await runProbe(
          config,
          { module: flagString(flags, 'module'), targets: flags.positionals, format: flagString(flags, 'format') as string },
          (text) => process.stdout.write(text),
          (text) => process.stderr.write(text),
        );
      }
    }
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`zero-plane-exporter: bad config:\n${err.message}\n`);
      return 2;
    }
    if (err instanceof UsageError) {
      process.stderr.write(`zero-plane-exporter: ${err.message}\nTry --help.\n`);
      return 2;
    }
    process.stderr.write(`zero-plane-exporter: ${(err as Error).message}\n`);
    return 1;
  }
}

async function runLoad(flags: ParsedFlags, log: Logger, signalled: Promise<string>): Promise<number> {
  const durationText = flagString(flags, 'load.duration');
  const durationMs = durationText === undefined ? undefined : parseDuration(durationText);
  if (durationText !== undefined && durationMs === undefined) throw new UsageError(`--load.duration: "${durationText}" is not a duration such as 30s`);
  let errors = 0;
  const { LoadGenerator } = await import('../loadgen/load-generator.js');
  const load = new LoadGenerator({
    target: flagString(flags, 'load.target') as string,
    ratePerSecond: positiveNumber(flags, 'load.rate'),
    logPath: flagString(flags, 'load.out') as string,
    ...seedOf(flags),
    // One line per failed request would flood the log when the target is down: report the first, count the rest.
    onError: (err) => {
      if (errors++ === 0) log.warn('request failed; counting further failures', { detail: err.message });
    },
  });
  load.start();
  log.info('sending', { target: flagString(flags, 'load.target'), rate: flagString(flags, 'load.rate'), out: flagString(flags, 'load.out') });
  const timer = durationMs === undefined ? undefined : new Promise((resolve) => setTimeout(resolve, durationMs).unref());
  await Promise.race([signalled, ...(timer ? [timer] : [])]);
  await load.stop();
  log.info('done', { sent: load.stats.sent, completed: load.stats.completed, errors: load.stats.errors, dropped: load.stats.dropped, byStatus: JSON.stringify(load.stats.byStatus) });
  return 0;
}

/** A reader that closed the pipe (`export … | head`): exit as a process killed by SIGPIPE, saying nothing. */
const EXIT_ON_EPIPE = 141;

/**
 * Runs a one-shot command (report, backtest, export): the first SIGTERM/SIGINT stops it (exit 143/130,
 * `stopped` logged) once its scratch files are removed; a closed output pipe ends it quietly (141),
 * another write error with a message (1).
 */
async function oneShot(command: Command, stopped: string, signalled: Promise<string>, log: Logger, run: (interrupt: AbortSignal) => Promise<number>): Promise<number> {
  const [{ endSoon, Interrupted, untilInterrupted }, { OutputClosed }] = await Promise.all([import('./interrupt.js'), import('./output-stream.js')]);
  const interrupt = new AbortController();
  void signalled.then((signal) => interrupt.abort(new Interrupted(signal)));
  try {
    const code = await untilInterrupted(run(interrupt.signal), interrupt.signal, (signal) => log.warn(stopped, { signal }));
    endSoon(interrupt.signal);
    return code;
  } catch (err) {
    if (!(err instanceof OutputClosed)) throw err;
    if (err.code === 'EPIPE') return EXIT_ON_EPIPE;
    process.stderr.write(`zero-plane-exporter: ${command}: ${err.message}\n`);
    return 1;
  }
}

/** --web.config.file, loaded (throws ConfigError: exit 2 naming the file, the line and the key). */
async function webConfigOf(flags: ParsedFlags, config: Config): Promise<{ webConfig?: WebConfig }> {
  const file = flagString(flags, 'web.config.file');
  if (file === undefined) return {};
  return { webConfig: (await import('../server/web-config.js')).loadWebConfig(file, { maxBcryptCost: config.web.basicAuth.maxBcryptCost }) };
}

/**
 * Where each part of `generate` goes: its own flag, else its default directory under --out.root (the
 * current directory by default). `--out` given alone is refused: the dashboards, mixin and deployment
 * files would silently land in the current directory, over a user's own deploy/ for instance.
 */
function generateDirs(flags: ParsedFlags, parts: readonly string[]): Map<string, string> {
  const given = (flag: string) => flags.values[flag] !== undefined;
  const others = parts.filter((p) => p !== 'out' && !given(p));
  if (given('out') && !given('out.root') && others.length > 0) {
    throw new UsageError(
      `--out names where the pack goes, but not where ${others.map((p) => `--${p}`).join(', ')} go: they would be written into the current directory. ` +
        'Give --out.root=DIR (every part under DIR), or each of those flags.',
    );
  }
  const root = flagString(flags, 'out.root') as string;
  return new Map(parts.map((p) => [p, given(p) ? (flagString(flags, p) as string) : join(root, flagString(flags, p) as string)]));
}

function noPositionals(flags: ParsedFlags, command: Command): void {
  if (flags.positionals.length > 0) throw new UsageError(`${command} takes no arguments, got ${flags.positionals.join(' ')}`);
}

function positiveNumber(flags: ParsedFlags, name: string): number {
  const text = flagString(flags, name);
  const n = Number(text);
  if (!Number.isFinite(n) || n <= 0) throw new UsageError(`--${name} must be a positive number, not "${text}"`);
  return n;
}

function nonNegativeNumber(flags: ParsedFlags, name: string): number {
  const text = flagString(flags, name);
  const n = Number(text);
  if (text === undefined || text.trim() === '' || !Number.isFinite(n) || n < 0) throw new UsageError(`--${name} must be a number of 0 or more, not "${text}"`);
  return n;
}

function seedOf(flags: ParsedFlags): { seed?: number } {
  const text = flagString(flags, 'seed');
  if (text === undefined) return {};
  const seed = Number(text);
  if (!Number.isInteger(seed)) throw new UsageError(`--seed must be an integer, not "${text}"`);
  return { seed };
}

function listenAddress(text: string, flag: string) {
  const at = parseListenAddress(text);
  if (at === undefined) throw new UsageError(`--${flag}: "${text}" is not HOST:PORT or :PORT`);
  return at;
}

/** --web.max-requests when given (a whole number, 0 = no limit), else the config's web.maxRequests. */
function maxRequestsOf(flags: ParsedFlags, configured: number): number {
  const text = flags.values['web.max-requests'];
  if (typeof text !== 'string') return configured;
  const n = Number(text);
  if (!/^\d+$/.test(text) || n > 10_000) throw new UsageError(`--web.max-requests must be a whole number from 0 (no limit) to 10000, not "${text}"`);
  return n;
}

/** --web.probe-listen-address when given, else the config's web.probeListenAddress (none when neither). */
function probeListenOf(flags: ParsedFlags, configured: string | undefined): { probeListenAddress?: string } {
  const text = flags.values['web.probe-listen-address'];
  if (typeof text !== 'string') return configured === undefined ? {} : { probeListenAddress: configured };
  listenAddress(text, 'web.probe-listen-address');
  return { probeListenAddress: text };
}

/** Flags given on the command line win over the config file; positional FILEs add to its sources. */
function withServeFlags(config: Config, flags: ParsedFlags): Config {
  const startAt = flags.values['tail.start-at'];
  if (startAt !== undefined && startAt !== 'end' && startAt !== 'start') throw new UsageError('--tail.start-at must be end or start');
  const files = flags.positionals.filter((p) => p !== '-');
  const checkpointFile = flags.values['checkpoint.file'];
  if (checkpointFile === '') throw new UsageError('--checkpoint.file must name a file');
  const workers = flags.values['parse.workers'];
  if (typeof workers === 'string' && (!/^\d+$/.test(workers) || Number(workers) > 16)) throw new UsageError(`--parse.workers must be a whole number from 0 to 16, not "${workers}"`);
  return {
    ...config,
    parse: { ...config.parse, workers: typeof workers === 'string' ? Number(workers) : config.parse.workers },
    gate: { ...config.gate, scope: { ...config.gate.scope, ...scopeFlags(config, flagStrings(flags, 'gate.scope') ?? []) } },
    checkpoint: { ...config.checkpoint, file: (checkpointFile as string | undefined) ?? config.checkpoint.file },
    web: {
      ...config.web,
      // Repeated, the flag binds each address; given at all, it replaces the config's list.
      listenAddress: flagStrings(flags, 'web.listen-address') ?? config.web.listenAddress,
      telemetryPath: (flags.values['web.telemetry-path'] as string | undefined) ?? config.web.telemetryPath,
      maxRequests: maxRequestsOf(flags, config.web.maxRequests),
      ...probeListenOf(flags, config.web.probeListenAddress),
    },
    sources: {
      ...config.sources,
      files: [...config.sources.files, ...files],
      stdin: config.sources.stdin || flags.positionals.includes('-'),
      startAt: (startAt as 'end' | 'start' | undefined) ?? config.sources.startAt,
    },
  };
}

/** --gate.scope LABEL=VALUE, each checked as gate.scope is: an aggregation label and a value. */
function scopeFlags(config: Config, values: string[]): Record<string, string> {
  const scope: Record<string, string> = {};
  for (const v of values) {
    const m = /^([a-zA-Z_][a-zA-Z0-9_]*)=(.+)$/.exec(v);
    if (m === null) throw new UsageError(`--gate.scope: "${v}" is not LABEL=VALUE (e.g. namespace=llm)`);
    const [, label, value] = m as unknown as [string, string, string];
    if (!config.pack.aggregationLabels.includes(label)) {
      throw new UsageError(`--gate.scope: "${label}" is not one of pack.aggregationLabels (${config.pack.aggregationLabels.join(', ')}): the P0 carries only those labels`);
    }
    scope[label] = value;
  }
  return scope;
}
