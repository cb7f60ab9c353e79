// Structured logs on stderr, one record per line, so they can be shipped like any other log: JSON objects
// (the default), or logfmt (`--log.format=logfmt`) as Prometheus and its exporters write it.

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
const RANK: Record<LogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3 };

export const LOG_FORMATS = ['json', 'logfmt'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

export type LogFields = Record<string, string | number | boolean | undefined>;

export interface Logger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
}

export function createLogger(level: LogLevel, write: (line: string) => void = (l) => process.stderr.write(l), format: LogFormat = 'json'): Logger {
  const line = format === 'json' ? jsonLine : logfmtLine;
  const at =
    (lvl: LogLevel) =>
    (msg: string, fields: LogFields = {}) => {
      if (RANK[lvl] < RANK[level]) return;
      write(line({ ts: new Date().toISOString(), level: lvl, msg, ...fields }));
    };
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

function jsonLine(record: LogFields): string {
  return `${JSON.stringify(record)}\n`;
}

/**
 * `key=value` pairs separated by spaces (go-logfmt's rules): a value with a space, `=`, `"` or a control
 * character is quoted with Go-style escapes; an empty value is `""`; undefined fields are left out. Keys
 * are ours (identifiers), never input.
 */
export function logfmtLine(record: LogFields): string {
  const parts: string[] = [];
  for (const [key, value] of Object.entries(record)) {
    if (value === undefined) continue;
    parts.push(`${key}=${logfmtValue(String(value))}`);
  }
  return `${parts.join(' ')}\n`;
}

function logfmtValue(text: string): string {
  if (text !== '' && !/[\s="\\\x00-\x1f\x7f]/.test(text)) return text;
  return `"${text.replace(/[\\"\x00-\x1f\x7f]/g, (c) => ESCAPES[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)}"`;
}

const ESCAPES: Record<string, string> = { '\\': '\\\\', '"': '\\"', '\n': '\\n', '\r': '\\r', '\t': '\\t' };
