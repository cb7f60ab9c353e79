// A config problem, as one message naming the file, the line and the key (the CLI exits 2 with it). Apart
// from load.ts so the CLI can catch it without loading the YAML parser when no config file is given.
export class ConfigError extends Error {
  constructor(
    readonly file: string,
    readonly problems: readonly { line: number | undefined; key: string; message: string }[],
  ) {
    super(problems.map((p) => `${file}${p.line === undefined ? '' : `:${p.line}`}: ${p.key || '(top level)'}: ${p.message}`).join('\n'));
    this.name = 'ConfigError';
  }
}
