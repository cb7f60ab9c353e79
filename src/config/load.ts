// Reads the YAML config and turns every problem into one message naming the file, the line and the key,
// because an SRE fixing a config at 3 a.m. should not have to guess where the error is.
import { isNode, LineCounter, parseDocument, type Document, type YAMLError } from 'yaml';
import type { z } from 'zod';
import { ConfigError } from './config-error.js';
import { readRegularFile, RegularFileError } from './regular-file.js';
import { configSchema, defaultConfig, type Config } from './schema.js';

export { ConfigError };

/** The config in `file`, or the built-in defaults when no file is given. Throws ConfigError. */
export function loadConfig(file: string | undefined): Config {
  if (file === undefined) return defaultConfig();
  return parseConfig(readConfigText(file), file);
}

export function parseConfig(text: string, file: string): Config {
  return parseYamlWith(configSchema, text, file).value;
}

/** A config file's text; an unreadable file, or one that is not a regular file of bounded size, is a ConfigError naming it. */
export function readConfigText(file: string): string {
  try {
    return readRegularFile(file);
  } catch (err) {
    if (err instanceof RegularFileError) throw new ConfigError(file, [{ line: undefined, key: '', message: err.message }]);
    throw err;
  }
}

/**
 * How far YAML aliases may expand (the yaml library's maxAliasCount: aliases times the nodes each stands
 * for). A config needs a few anchors at most; an alias bomb of 9^7 nodes would otherwise take the heap.
 */
export const MAX_YAML_ALIAS_COUNT = 100;

export interface ParsedYaml<T> {
  value: T;
  /** The line of a key path, for problems found after the schema (cross-field checks). */
  lineOf(path: readonly PropertyKey[]): number | undefined;
}

/** YAML text validated by a zod schema; every problem becomes a ConfigError with its line and key. */
export function parseYamlWith<S extends z.ZodType>(schema: S, text: string, file: string): ParsedYaml<z.output<S>> {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length > 0) {
    throw new ConfigError(
      file,
      doc.errors.map((e) => ({ line: yamlErrorLine(text, e, lines), key: '', message: (e.message.split('\n')[0] ?? e.message).replace(/ at line \d+, column \d+:?$/, '') })),
    );
  }
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: MAX_YAML_ALIAS_COUNT });
  } catch (err) {
    // The yaml library refuses a document whose aliases expand too far (a "billion laughs"): a config
    // problem like any other, naming the file, not a crash.
    throw new ConfigError(file, [{ line: undefined, key: '', message: `${(err as Error).message} (YAML aliases expand to more than ${MAX_YAML_ALIAS_COUNT} nodes; write the values out)` }]);
  }
  const parsed = schema.safeParse(data ?? {});
  if (!parsed.success) {
    throw new ConfigError(
      file,
      parsed.error.issues.map((issue) => ({
        line: lineOf(doc, lines, issue.path),
        key: issue.path.map(String).join('.'),
        message: issue.message,
      })),
    );
  }
  return { value: parsed.data, lineOf: (path) => lineOf(doc, lines, path) };
}

/**
 * The line a person would fix for a YAML syntax error. The parser reports where it noticed the problem:
 * for an unclosed quote or flow collection that is the end of the file or the next line, so point at the
 * line that opened it; for a key that runs onto the next line (bad indentation), at that next line.
 */
function yamlErrorLine(text: string, e: YAMLError, lines: LineCounter): number {
  const at = lines.linePos(e.pos[0]).line;
  if (e.code === 'MULTILINE_IMPLICIT_KEY') return lines.linePos(Math.max(e.pos[0], e.pos[1] - 1)).line;
  if (e.code !== 'MISSING_CHAR' && e.code !== 'BAD_INDENT') return at;
  const opener = /closing "quote/.test(e.message) ? '"' : /closing 'quote/.test(e.message) ? "'" : /end with a \]/.test(e.message) ? '[' : /end with a \}/.test(e.message) ? '{' : undefined;
  if (opener === undefined) return at;
  const open = text.lastIndexOf(opener, e.pos[0] - 1);
  return open < 0 ? at : lines.linePos(open).line;
}

/** The line of the deepest node that exists along `path` (an unknown key points at its parent map). */
function lineOf(doc: Document, lines: LineCounter, path: readonly PropertyKey[]): number | undefined {
  for (let depth = path.length; depth >= 0; depth--) {
    const node = depth === 0 ? doc.contents : doc.getIn(path.slice(0, depth) as unknown[], true);
    if (isNode(node) && node.range) return lines.linePos(node.range[0]).line;
  }
  return undefined;
}
