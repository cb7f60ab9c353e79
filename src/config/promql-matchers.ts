// A config's PromQL fragment (pack.selector: `job="zero-plane-exporter"`, `job=~"llm-gateway.*", namespace="llm"`)
// checked at load as promtool would check the rules it ends up in: parsed with lezer-promql (Prometheus'
// own grammar), then each string's escapes and each regex checked, which that grammar leaves to the Go
// side. A bad selector is exit 2 naming the key, not 47 rules promtool rejects after `generate`.
import { createRequire } from 'node:module';

type LezerPromql = typeof import('@prometheus-io/lezer-promql');

/** Loaded on the first selector checked: a run on the defaults never pays for the grammar. */
let grammar: LezerPromql | undefined;
function promqlParser(): LezerPromql['parser'] {
  grammar ??= createRequire(import.meta.url)('@prometheus-io/lezer-promql') as LezerPromql;
  return grammar.parser;
}

/** Why `text` is not a comma-separated list of label matchers, or undefined when it is one. */
export function matcherListProblem(text: string): string | undefined {
  const trimmed = text.trim();
  if (trimmed === '') return 'empty: at least one matcher such as job="zero-plane-exporter" is needed';
  // The pack joins it with its own matchers ({SELECTOR, le="…"}): a trailing comma would make ", ,".
  if (trimmed.endsWith(',')) return 'ends with a comma';
  const query = `{${trimmed}}`;
  const tree = promqlParser().parse(query);
  let problem: string | undefined;
  let matchers = 0;
  tree.iterate({
    enter(node) {
      if (problem !== undefined) return false;
      const at = query.slice(node.from, node.to);
      if (node.type.isError) {
        // An empty error node marks where the parser gave up: name what follows there in the user's text.
        const rest = at !== '' ? at : trimmed.slice(Math.max(0, node.from - 1)).slice(0, 24);
        problem = rest === '' ? 'unexpected end' : `unexpected "${rest}"`;
        return false;
      }
      if (node.name === 'QuotedLabelMatcher' || node.name === 'QuotedLabelName') {
        problem = `quoted label names ("${at}") need Prometheus 3; write the name bare`;
        return false;
      }
      if (node.name === 'UnquotedLabelMatcher') {
        matchers++;
        const op = node.node.getChild('MatchOp');
        const literal = node.node.getChild('StringLiteral');
        if (op === null || literal === null) return undefined;
        const value = unquote(query.slice(literal.from, literal.to));
        if (typeof value !== 'string') problem = `${at}: ${value.error}`;
        else {
          const opText = query.slice(op.from, op.to);
          if (opText === '=~' || opText === '!~') problem = regexProblem(value, at);
        }
        return false;
      }
      return undefined;
    },
  });
  if (problem !== undefined) return problem;
  if (tree.topNode.firstChild?.name !== 'VectorSelector' || matchers === 0) return 'not a list of PromQL label matchers (at least one)';
  return undefined;
}

/**
 * A PromQL string literal's value, with Prometheus' escapes (its lexer's lexEscape): \a \b \f \n \r \t \v
 * \\, the quote itself, \NNN octal, \xHH, \uHHHH, \UHHHHHHHH; any other escape is an error (`\.` in a
 * regex must be written `\\.`). Backquoted strings take no escapes.
 */
function unquote(literal: string): string | { error: string } {
  const quote = literal.charAt(0);
  const body = literal.slice(1, -1);
  if (quote === '`') return body;
  let out = '';
  for (let i = 0; i < body.length; i++) {
    const ch = body.charAt(i);
    if (ch !== '\\') {
      out += ch;
      continue;
    }
    const e = body.charAt(++i);
    const simple: Record<string, string> = { a: '\x07', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v', '\\': '\\' };
    if (e in simple) out += simple[e];
    else if (e === quote) out += e;
    else {
      const form = /[0-7]/.test(e)
        ? { n: 3, re: /^[0-7]{3}$/, base: 8 }
        : e === 'x'
          ? { n: 2, re: /^[0-9a-fA-F]{2}$/, base: 16 }
          : e === 'u'
            ? { n: 4, re: /^[0-9a-fA-F]{4}$/, base: 16 }
            : e === 'U'
              ? { n: 8, re: /^[0-9a-fA-F]{8}$/, base: 16 }
              : undefined;
      if (form === undefined) return { error: `unknown escape sequence "\\${e}" in a PromQL string (Go escapes: a regex's \\. is written \\\\. there, as it stands inside YAML's single quotes)` };
      const digits = /[0-7]/.test(e) ? body.slice(i, i + 3) : body.slice(i + 1, i + 1 + form.n);
      if (!form.re.test(digits)) return { error: `escape "\\${e}" needs ${form.n} ${form.base === 8 ? 'octal' : 'hex'} digits` };
      out += String.fromCodePoint(parseInt(digits, form.base));
      i += /[0-7]/.test(e) ? 2 : form.n;
    }
  }
  return out;
}

/** Why `value` is not a regex Prometheus (Go's RE2) accepts, as far as a JavaScript RegExp can tell. */
function regexProblem(value: string, at: string): string | undefined {
  // RE2 has neither look-around nor back-references, which a JavaScript RegExp would accept.
  if (/\(\?<?[=!]/.test(value)) return `${at}: look-ahead and look-behind are not RE2 (Prometheus' regex syntax)`;
  if (/\\[1-9]/.test(value)) return `${at}: back-references are not RE2 (Prometheus' regex syntax)`;
  try {
    // Without the u flag: it refuses escapes such as \- that RE2 takes.
    new RegExp(`^(?:${value})$`);
  } catch (err) {
    return `${at}: not a valid regex: ${(err as Error).message}`;
  }
  return undefined;
}
