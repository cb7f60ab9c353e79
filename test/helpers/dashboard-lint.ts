// grafana/dashboard-linter's Prometheus rules (lint/rule_*.go at its HEAD), ported to TypeScript over
// lezer-promql: each rule below keeps the Go rule's name, the panels it applies to and what it accepts.
// Where the Go code is looser than its own description, the port follows the description and says so.
import { parser } from '@prometheus-io/lezer-promql';

/** lezer's node type, taken from the parser (so no direct dependency on @lezer/common). */
type SyntaxNode = ReturnType<typeof parser.parse>['topNode'];

export interface LintTarget {
  expr?: string;
  datasource?: { uid?: string };
}

export interface LintPanel {
  type: string;
  title?: string;
  description?: string;
  datasource?: { uid?: string } | null;
  targets?: LintTarget[];
  panels?: LintPanel[];
  fieldConfig?: { defaults?: { unit?: string; mappings?: unknown[] }; overrides?: { properties?: { id: string; value: unknown }[] }[] };
  options?: { reduceOptions?: { fields?: string } };
}

export interface LintTemplate {
  type: string;
  name: string;
  label?: string;
  query?: unknown;
  datasource?: { uid?: string } | string | null;
  multi?: boolean;
  allValue?: string;
  refresh?: number;
}

export interface LintDashboard {
  title: string;
  editable?: boolean;
  panels: LintPanel[];
  templating: { list: LintTemplate[] };
}

export interface Finding {
  rule: string;
  where: string;
  message: string;
  severity: 'error' | 'warning';
}

/** Grafana's global variables as the linter substitutes them (lint/variables.go): odd durations, so a real `[5m]` is told apart. */
const MAGIC_RATE_INTERVAL = '8869990787ms';
const GLOBALS: Record<string, string> = {
  __rate_interval: MAGIC_RATE_INTERVAL,
  __interval: '4867856611ms',
  __interval_ms: '7781188786',
  __range_ms: '6737667980',
  __range_s: '9397795485',
  __range: '6069770749ms',
  __auto: '12345ms',
};

/** Substitutes variables outside double-quoted strings only, as expandVariables does: `job=~"$job"` stays `$job`. */
export function expandOutsideQuotes(expr: string): string {
  return expr
    .split('"')
    .map((part, i) =>
      i % 2 === 1
        ? part
        : part.replace(/\$\{([^}]+)\}|\[\[([^[\]]+)\]\]|\$(\w+)/g, (_m, a?: string, b?: string, c?: string) => {
            const name = (a ?? b ?? c ?? '').split(':')[0] as string;
            return GLOBALS[name] ?? name;
          }),
    )
    .join('"');
}

interface Parsed {
  ok: boolean;
  expr: string;
  root: SyntaxNode;
}

function parse(expr: string): Parsed {
  const tree = parser.parse(expr);
  let ok = expr.trim().length > 0;
  tree.iterate({
    enter(n) {
      if (n.type.isError) ok = false;
    },
  });
  return { ok, expr, root: tree.topNode };
}

/** Every node called `name` inside `root` (root included), in document order. */
function nodesNamed(root: SyntaxNode, name: string): SyntaxNode[] {
  const out: SyntaxNode[] = root.name === name ? [root] : [];
  for (let child = root.firstChild; child; child = child.nextSibling) out.push(...nodesNamed(child, name));
  return out;
}

const text = (p: Parsed, n: SyntaxNode | null | undefined) => (n ? p.expr.slice(n.from, n.to) : '');

/** The function a node is the argument of, if any: FunctionCall > FunctionCallBody > node. */
function enclosingCall(p: Parsed, n: SyntaxNode): string | undefined {
  const body = n.parent;
  if (body?.name !== 'FunctionCallBody' || body.parent?.name !== 'FunctionCall') return undefined;
  return text(p, body.parent.getChild('FunctionIdentifier'));
}

interface Matcher {
  name: string;
  op: string;
  value: string;
}

function matchersOf(p: Parsed, selector: SyntaxNode): Matcher[] {
  return nodesNamed(selector, 'UnquotedLabelMatcher').map((m) => ({
    name: text(p, m.getChild('LabelName')),
    op: text(p, m.getChild('MatchOp')),
    value: JSON.parse(text(p, m.getChild('StringLiteral')).replace(/^'(.*)'$/s, '"$1"')) as string,
  }));
}

const PROMETHEUS = 'prometheus';
/** Panel types per rule, as in lint/constants.go and each rule's switch. */
const TITLE_UNIT_TARGET_TYPES = new Set(['stat', 'singlestat', 'graph', 'table', 'timeseries', 'gauge']);
const DATASOURCE_TYPES = new Set(['singlestat', 'graph', 'table', 'timeseries']);
const QUERY_TYPES = new Set(['singlestat', 'gauge', 'table', 'stat', 'state-timeline', 'timeseries']);
/** lint/rule_panel_units.go's list, the part that can occur here (time, ratios, counts, throughput). */
const VALID_UNITS = new Set([
  'none',
  'string',
  'short',
  'percent',
  'percentunit',
  'ns',
  'µs',
  'ms',
  's',
  'm',
  'h',
  'd',
  'dtdurationms',
  'dtdurations',
  'cps',
  'ops',
  'reqps',
  'rps',
  'wps',
  'iops',
  'cpm',
  'opm',
  'rpm',
  'wpm',
  'bytes',
  'decbytes',
  'bool',
]);

function allPanels(panels: LintPanel[]): LintPanel[] {
  return panels.flatMap((p) => [p, ...allPanels(p.panels ?? [])]);
}

const dsUid = (ds: LintTemplate['datasource']) => (typeof ds === 'string' ? ds : (ds?.uid ?? ''));
const titleCase = (s: string) => s.replace(/\b\w/g, (c) => c.toUpperCase());

export function lintDashboard(d: LintDashboard): Finding[] {
  const findings: Finding[] = [];
  const add = (rule: string, where: string, message: string, severity: Finding['severity'] = 'error') => findings.push({ rule, where: `${d.title}${where}`, message, severity });
  const templates = d.templating.list;
  const dsTemplates = templates.filter((t) => t.type === 'datasource');
  const dsTemplate = dsTemplates[0];
  const isPrometheus = dsTemplate?.query === PROMETHEUS;

  // template-datasource-rule
  if (dsTemplates.length === 0) add('template-datasource-rule', '', 'does not have a templated data source');
  for (const t of dsTemplates) {
    const uids = new Set([`${String(t.query).toLowerCase()}_datasource`, ...(dsTemplates.length === 1 ? ['datasource'] : [])]);
    const names = new Set([`${titleCase(String(t.query))} data source`, ...(dsTemplates.length === 1 ? ['Data source'] : [])]);
    if (!uids.has(t.name)) add('template-datasource-rule', '', `templated data source variable named '${t.name}'`);
    if (!names.has(t.label ?? '')) add('template-datasource-rule', '', `templated data source variable labeled '${t.label}'`, 'warning');
  }

  // template-job-rule, template-instance-rule (checkTemplate)
  if (isPrometheus) {
    for (const name of ['job', 'instance']) {
      const rule = `template-${name}-rule`;
      const t = templates.find((x) => x.name === name);
      if (!t) {
        add(rule, '', `is missing the ${name} template`);
        continue;
      }
      if (!['$datasource', '${datasource}', '$prometheus_datasource', '${prometheus_datasource}'].includes(dsUid(t.datasource))) {
        add(rule, '', `${name} template should use datasource '$datasource', is currently '${dsUid(t.datasource)}'`);
      }
      if (t.type !== 'query') add(rule, '', `${name} template should be a Prometheus query, is currently '${t.type}'`);
      if (t.label !== titleCase(name)) add(rule, '', `${name} template should be a labeled '${titleCase(name)}', is currently '${t.label}'`, 'warning');
      if (!t.multi) add(rule, '', `${name} template should be a multi select`);
      if (t.allValue !== '.+') add(rule, '', `${name} template allValue should be '.+', is currently '${t.allValue}'`);
    }
  }

  for (const t of templates.filter((x) => x.type === 'query')) {
    // template-label-promql-rule: function(argument); the argument's selector must parse.
    if (isPrometheus) {
      const m = /([a-z_]+)\((.+)\)/s.exec(String(t.query));
      if (!m) add('template-label-promql-rule', '', `template '${t.name}' invalid 'query': ${String(t.query)}`);
      else if (!['label_names', 'label_values', 'metrics', 'query_result'].includes(m[1] as string)) {
        add('template-label-promql-rule', '', `template '${t.name}' invalid 'function': ${m[1]}`);
      } else {
        const arg = m[1] === 'label_values' ? (m[2] as string).replace(/,\s*\w+\s*$/, '') : (m[2] as string);
        if (arg.trim() && !parse(expandOutsideQuotes(arg)).ok) add('template-label-promql-rule', '', `template '${t.name}' invalid templated label '${String(t.query)}'`);
      }
    }
    // template-on-time-change-reload-rule
    if (t.refresh !== 2)
      add('template-on-time-change-reload-rule', '', `templated datasource variable named '${t.name}', should be set to be refreshed 'On Time Range Change (value 2)', is currently '${t.refresh}'`);
  }

  const dsRefs = new Set(dsTemplates.flatMap((t) => [`$${t.name}`, `\${${t.name}}`]));
  for (const p of allPanels(d.panels)) {
    const where = `, panel '${p.title}'`;
    if (DATASOURCE_TYPES.has(p.type) && !dsRefs.has(p.datasource?.uid ?? '')) {
      add('panel-datasource-rule', where, `does not use a templated datasource, uses '${p.datasource?.uid}'`);
    }
    if (TITLE_UNIT_TARGET_TYPES.has(p.type)) {
      if (!p.title || !p.description) add('panel-title-description-rule', where, 'has missing title or description');
      if (p.targets === undefined) add('panel-no-targets-rule', where, 'has no targets');
      const nonNumericStat = p.type === 'stat' && (p.options?.reduceOptions?.fields ?? '') !== '';
      const mappings = p.fieldConfig?.overrides?.some((o) => o.properties?.some((x) => x.id === 'mappings' && x.value != null)) || (p.fieldConfig?.defaults?.mappings?.length ?? 0) > 0;
      if (!nonNumericStat && !mappings) {
        const override = p.fieldConfig?.overrides?.flatMap((o) => o.properties ?? []).find((x) => x.id === 'unit')?.value as string | undefined;
        const unit = override ?? p.fieldConfig?.defaults?.unit ?? '';
        if (!VALID_UNITS.has(unit)) add('panel-units-rule', where, `has no or invalid units defined: '${unit}'`);
      }
    }
    (p.targets ?? []).forEach((t, i) => {
      const at = `${where}, target idx '${i}'`;
      if (!isPrometheus) return;
      const parsed = parse(expandOutsideQuotes(t.expr ?? ''));
      if (QUERY_TYPES.has(p.type) && !parsed.ok) add('target-promql-rule', at, `invalid PromQL query '${t.expr}'`);
      if (!parsed.ok) return; // invalid PromQL is target-promql-rule's business
      const selectors = nodesNamed(parsed.root, 'VectorSelector');
      // target-job-rule, target-instance-rule: every selector has name=~"$name".
      for (const name of ['job', 'instance']) {
        for (const s of selectors) {
          if (!matchersOf(parsed, s).some((m) => m.name === name && m.op === '=~' && m.value === `$${name}`)) {
            add(`target-${name}-rule`, at, `invalid PromQL query '${t.expr}': ${name} selector not found in ${text(parsed, s)}`);
          }
        }
      }
      if (QUERY_TYPES.has(p.type)) {
        // target-rate-interval-rule: a range given to rate() or irate() is $__rate_interval.
        for (const m of nodesNamed(parsed.root, 'MatrixSelector')) {
          const range = text(parsed, m.getChild('DurationExpr'));
          const fn = enclosingCall(parsed, m);
          if (range !== MAGIC_RATE_INTERVAL && (fn === 'rate' || fn === 'irate')) add('target-rate-interval-rule', at, `invalid PromQL query '${t.expr}': should use $__rate_interval`);
        }
      }
      // target-counter-agg-rule: a counter (*_total) only inside rate, irate or increase. The Go rule tests the
      // selector's text, so a counter with matchers slips through; this port tests the metric name.
      for (const s of selectors) {
        const metric = text(parsed, s.getChild('Identifier'));
        if (!metric.endsWith('_total')) continue;
        const fn = s.parent?.name === 'MatrixSelector' ? enclosingCall(parsed, s.parent) : undefined;
        if (!['rate', 'irate', 'increase'].includes(fn ?? '')) add('target-counter-agg-rule', at, `counter metric '${text(parsed, s)}' is not aggregated with rate, irate, or increase`);
      }
    });
  }

  // uneditable-dashboard
  if (d.editable) add('uneditable-dashboard', '', "is editable, it should be set to 'editable: false'");
  return findings;
}
