// The command line: a thin shell that parses flags, loads the config and runs `serve` or `report`.
import { ConfigError, loadConfig } from '../config/load.js';
import type { Config } from '../config/schema.js';
import { createLogger, type LogLevel } from '../server/logger.js';
import { flagString, helpText, parseFlags, UsageError, type Command, type ParsedFlags } from './flags.js';
import { writePack } from '../pack/write-pack.js';
import { runReport } from './report-command.js';
import { startServe } from './serve-command.js';
import { VERSION } from './version.js';

const LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error'];
const COMMANDS: readonly Command[] = ['serve', 'report', 'generate'];

export async function main(argv: string[]): Promise<number> {
  const named = COMMANDS.find((c) => c === argv[0]);
  const command: Command = named ?? 'serve';
  const args = named === undefined ? argv : argv.slice(1);
  try {
    const flags = parseFlags(command, args);
    if (flags.values.help) {
      process.stdout.write(helpText(command));
      return 0;
    }
    if (flags.values.version) {
      process.stdout.write(`zero-plane-exporter ${VERSION}\n`);
      return 0;
    }
    const level = flagString(flags, 'log.level') as LogLevel;
    if (!LEVELS.includes(level)) throw new UsageError(`--log.level must be one of ${LEVELS.join(', ')}`);
    const log = createLogger(level);
    const config = loadConfig(flagString(flags, 'config.file'));

    if (command === 'generate') {
      if (flags.positionals.length > 0) throw new UsageError(`generate takes no arguments, got ${flags.positionals.join(' ')}`);
      for (const path of writePack(config, flagString(flags, 'out') as string)) log.info('wrote', { path });
      return 0;
    }
    if (command === 'report') {
      return await runReport(
        config,
        { files: flags.positionals, format: flagString(flags, 'format') as string, failOn: flagString(flags, 'fail-on') },
        (text) => process.stdout.write(text),
      );
    }
    // Handlers go in before the server starts, so a signal during start-up is still a clean shutdown.
    const signalled = new Promise<string>((resolve) => {
      process.once('SIGTERM', () => resolve('SIGTERM'));
      process.once('SIGINT', () => resolve('SIGINT'));
    });
    const server = await startServe(withServeFlags(config, flags), log);
    const signal = await signalled;
    log.info('shutting down', { signal });
    await server.stop();
    return 0;
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

/** Flags given on the command line win over the config file; positional FILEs add to its sources. */
function withServeFlags(config: Config, flags: ParsedFlags): Config {
  const startAt = flags.values['tail.start-at'];
  if (startAt !== undefined && startAt !== 'end' && startAt !== 'start') throw new UsageError('--tail.start-at must be end or start');
  const files = flags.positionals.filter((p) => p !== '-');
  return {
    ...config,
    web: {
      listenAddress: (flags.values['web.listen-address'] as string | undefined) ?? config.web.listenAddress,
      telemetryPath: (flags.values['web.telemetry-path'] as string | undefined) ?? config.web.telemetryPath,
    },
    sources: {
      ...config.sources,
      files: [...config.sources.files, ...files],
      stdin: config.sources.stdin || flags.positionals.includes('-'),
      startAt: (startAt as 'end' | 'start' | undefined) ?? config.sources.startAt,
    },
  };
}
