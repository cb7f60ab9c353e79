// zero-plane-exporter's monitoring mixin: the recording rules, alerts and Grafana dashboards of the
// alerting pack, for jsonnet users (kube-prometheus, mixtool). The rules, alerts and dashboards are the
// files `zero-plane-exporter generate` writes (mixin/generated/), rendered with a token wherever the
// aggregation labels, the selector or the runbook URL go; this file puts _config in their place, so the
// result is what `generate` writes for the same three settings. Every threshold is the one of the config
// that generated mixin/generated/ (regenerate it for others: --config.file, --mixin.out).
//
//   local zeroPlane = (import 'zero-plane-exporter/mixin/mixin.libsonnet') + {
//     _config+:: {
//       selector: 'job=~"llm-gateway.*"',
//       aggregationLabels: ['cluster', 'namespace', 'job'],
//     },
//   };
//   zeroPlane.prometheusRules   // { groups: [...] }: recording rules
//   zeroPlane.prometheusAlerts  // { groups: [...] }: alerting rules
//   zeroPlane.grafanaDashboards // { 'zero-plane-overview.json': {...}, ... }
{
  _config:: (import 'generated/config.json'),

  local mixin = self,
  local cfg = mixin._config,
  local labels = cfg.aggregationLabels,
  local title(l) = std.asciiUpper(l[0]) + l[1:],
  // The tokens of src/pack/grouping.ts (templateGrouping) and their values for _config.
  local tokens = {
    '@@by@@': std.join(', ', labels),
    '@@labelsText@@': std.join('/', ['{{ $labels.%s }}' % l for l in labels]),
    '@@labelWords@@': std.join('/', labels),
    '@@queryMatchers@@': std.join(',', ["%s='%%s'" % l for l in labels]),
    '@@queryArgs@@': std.join(' ', ['$labels.' + l for l in labels]),
    '@@selector@@': cfg.selector,
    '@@variableMatchers@@': std.join(', ', ['%s=~"$%s"' % [l, l] for l in labels]),
    '@@legend@@': std.join(' ', ['{{%s}}' % l for l in labels]),
    '@@runbookUrl@@': cfg.runbookUrl,
  },
  // Tokens only ever stand inside JSON strings, so they are replaced in the files' text, by their values
  // escaped for a JSON string, before parsing: one pass per token (jsonnet is slow per string).
  local jsonEscaped(v) = local q = std.escapeStringJson(v); std.substr(q, 1, std.length(q) - 2),
  local replaceIn(s, table) = std.foldl(function(acc, k) std.strReplace(acc, k, table[k]), std.objectFields(table), s),
  local load(text) = std.parseJson(replaceIn(text, { [k]: jsonEscaped(tokens[k]) for k in std.objectFields(tokens) })),
  local fill(x, table) =
    if std.isString(x) then replaceIn(x, table)
    else if std.isArray(x) then [fill(e, table) for e in x]
    else if std.isObject(x) then { [k]: fill(x[k], table) for k in std.objectFields(x) }
    else x,

  // The template has one dashboard variable for "the" aggregation label: one per label, in order, each
  // narrowed by the ones before it.
  local groupVariables(v) = [
    fill(v, {
      '@@label@@': labels[i],
      '@@previous@@': std.join('', [', %s=~"$%s"' % [p, p] for p in labels[0:i]]),
    }) + { label: title(labels[i]) }
    for i in std.range(0, std.length(labels) - 1)
  ],
  local dashboard(d) = d {
    templating+: {
      list: std.flatMap(function(v) if v.name == '@@label@@' then groupVariables(v) else [v], d.templating.list),
    },
  },
  local boards = load(importstr 'generated/dashboards.json'),

  prometheusRules+:: load(importstr 'generated/prometheus_rules.json'),
  prometheusAlerts+:: load(importstr 'generated/prometheus_alerts.json'),
  grafanaDashboards+:: { [name]: dashboard(boards[name]) for name in std.objectFields(boards) },
}
