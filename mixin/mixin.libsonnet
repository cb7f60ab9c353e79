// zero-plane-exporter's monitoring mixin: the recording rules, alerts and Grafana dashboards of the
// alerting pack, for jsonnet users (kube-prometheus, mixtool). The rules, alerts and dashboards are the
// files `zero-plane-exporter generate` writes (mixin/generated/), rendered with a token wherever the
// aggregation labels, the selector, the runbook URL or a threshold go; this file puts _config in their
// place, so the result is what `generate` writes for the same settings. The windows, `for` durations
// and burn factors are those of the config that generated mixin/generated/ (regenerate for others:
// --config.file, --mixin.out).
//
//   jb install github.com/zero-plane/zero-plane-exporter/mixin@main
//
//   local zeroPlane = (import 'github.com/zero-plane/zero-plane-exporter/mixin/mixin.libsonnet') + {
//     _config+:: {
//       selector: 'job=~"llm-gateway.*"',
//       aggregationLabels: ['cluster', 'namespace', 'job'],
//       minRequests: 500,
//       latencyObjective: 0.995,
//     },
//   };
//   zeroPlane.prometheusRules   // { groups: [...] }: recording rules
//   zeroPlane.prometheusAlerts  // { groups: [...] }: alerting rules
//   zeroPlane.grafanaDashboards // { 'zero-plane-overview.json': {...}, ... }
//
// _config (defaults: generated/config.json, the generating config's values):
//   selector, aggregationLabels, runbookUrl  pack.selector, pack.aggregationLabels, pack.runbookUrl
//   baselineSeconds, tolerance               signals.*: the latency band (floor, ceiling). The exporter's
//                                            histogram has buckets at exactly floor and ceiling, so keep
//                                            these equal to the exporter's own config.
//   hitRateTarget, warmupEfficiencyTarget    signals.*: ZeroPlaneHitRateLow, ZeroPlaneWarmupEfficiencyLow
//   minRequests                              alerts.minRequests: the traffic guard
//   warmupDrop, driftAbove                   pack.earlyWarning.*: ZeroPlaneWarmupEfficiencySliding,
//                                            ZeroPlaneP99DriftCreeping
//   hitRateObjective, latencyObjective       slos.hitRate.objective, slos.latency.objective
// Numbers print as `generate` prints them for up to 12 significant digits.
{
  _config:: (import 'generated/config.json'),

  local mixin = self,
  local cfg = mixin._config,
  local labels = cfg.aggregationLabels,
  local title(l) = std.asciiUpper(l[0]) + l[1:],

  // A number as JavaScript's String(Number(x.toPrecision(p))) prints it (no exponent form): the
  // generators round to p significant digits and print the shortest decimal. By arithmetic, not
  // std.format('%e'), which costs milliseconds a call in C++ jsonnet and is not correctly rounded.
  local pow10(n) = if n >= 0 then std.pow(10, n) else 1 / std.pow(10, -n),
  // a × b as p + err exactly (Dekker's TwoProduct): says which side of a rounding tie a product is on.
  local split(x) = local c = 134217729 * x; local hi = c - (c - x); [hi, x - hi],
  local twoProduct(a, b) =
    local p = a * b;
    local as = split(a);
    local bs = split(b);
    [p, ((as[0] * bs[0] - p) + as[0] * bs[1] + as[1] * bs[0]) + as[1] * bs[1]],
  // Trailing zeros off by index: std.rstripChars costs ~3 ms a call in jsonnet 0.18 (a slice per char).
  local stripZeros(s) = local end(i) = if i > 0 && s[i - 1] == '0' then end(i - 1) else i; std.substr(s, 0, end(std.length(s))),
  local num(x, p) =
    local a = std.abs(x);
    if a == 0 then '0' else
      local e0 = std.floor(std.log(a) / std.log(10));
      local e1 = if a >= pow10(e0 + 1) then e0 + 1 else if a < pow10(e0) then e0 - 1 else e0;
      // The p digits: a × 10^(p-1-e) rounded, half up as toPrecision; a product on a tie goes by its error.
      local digitsAt(e) =
        if p - 1 - e >= 0 then
          local t = twoProduct(a, pow10(p - 1 - e));
          local f = std.floor(t[0]);
          if t[0] - f == 0.5 then (if t[1] < 0 then f else f + 1) else std.floor(t[0] + 0.5)
        else std.floor(a / pow10(e - p + 1) + 0.5);
      local m0 = digitsAt(e1);
      local exp = if m0 >= pow10(p) then e1 + 1 else e1;
      local digits = std.toString(if m0 >= pow10(p) then digitsAt(exp) else m0);
      local zeros(n) = std.join('', ['0' for _ in std.range(1, n)]);
      local int = if exp < 0 then '0' else if exp + 1 >= p then digits + zeros(exp + 1 - p) else std.substr(digits, 0, exp + 1);
      local frac = stripZeros(if exp < 0 then zeros(-exp - 1) + digits else if exp + 1 >= p then '' else std.substr(digits, exp + 1, p));
      (if x < 0 then '-' else '') + int + (if frac == '' then '' else '.' + frac),
  local r12(x) = std.parseJson(num(x, 12)),
  // An object whose fields are computed once: C++ jsonnet evaluates an object's field again on every
  // access, but an array element once. (Not std.parseJson(std.manifestJsonMinified(o)): jsonnet 0.18
  // escapes every string of it char by char, the bulk of a whole evaluation's CPU.)
  local once(o) = local keys = std.objectFields(o); local vals = [o[k] for k in keys]; { [keys[i]]: vals[i] for i in std.range(0, std.length(keys) - 1) },

  // The values a threshold decides, with the generators' arithmetic (src/mixin/render-mixin.ts
  // thresholdValues: thresholds(), slos(), errorRatioThreshold()).
  local budget = { 'hit-rate': r12(1 - cfg.hitRateObjective), latency: r12(1 - cfg.latencyObjective) },
  local values = once(valueFields),
  local valueFields = {
    baseline: r12(cfg.baselineSeconds),
    ceiling: r12(cfg.baselineSeconds * (1 + cfg.tolerance)),
    floor: r12(cfg.baselineSeconds * (1 - cfg.tolerance)),
    tolerance: cfg.tolerance,
    hitRateTarget: cfg.hitRateTarget,
    warmupEfficiencyTarget: cfg.warmupEfficiencyTarget,
    minRequests: cfg.minRequests,
    warmupDrop: cfg.warmupDrop,
    driftAbove: cfg.driftAbove,
    'objective.hit-rate': cfg.hitRateObjective,
    'objective.latency': cfg.latencyObjective,
    'budget.hit-rate': budget['hit-rate'],
    'budget.latency': budget.latency,
  } + {
    ['limit.' + slo + '.' + i]: r12(cfg.burnFactors[i] * budget[slo])
    for slo in ['hit-rate', 'latency']
    for i in std.range(0, std.length(cfg.burnFactors) - 1)
  },
  local formats = {
    plain(x): num(x, 12),
    ms(x): num(x * 1000, 10),
    pct(x): num(x * 100, 10),
    pct4(x): num(x * 100, 4),
  },
  local notNumbers = [k for k in ['baselineSeconds', 'tolerance', 'hitRateTarget', 'warmupEfficiencyTarget', 'minRequests', 'warmupDrop', 'driftAbove', 'hitRateObjective', 'latencyObjective'] if !std.isNumber(cfg[k])],
  local checked = std.length(notNumbers) == 0 || error '_config: not a number: ' + std.join(', ', notNumbers),

  // Every token (src/pack/grouping.ts templateGrouping, and the thresholds') and its text for _config.
  // Joined with +, not `%`: std.format is jsonnet code in 0.18, about a millisecond a call.
  local tokenFields = {
    by: std.join(', ', labels),
    labelsText: std.join('/', ['{{ $labels.' + l + ' }}' for l in labels]),
    labelWords: std.join('/', labels),
    queryMatchers: std.join(',', [l + "='%s'" for l in labels]),
    queryArgs: std.join(' ', ['$labels.' + l for l in labels]),
    selector: cfg.selector,
    variableMatchers: std.join(', ', [l + '=~"$' + l + '"' for l in labels]),
    legend: std.join(' ', ['{{' + l + '}}' for l in labels]),
    runbookUrl: cfg.runbookUrl,
    // Filled per dashboard variable below.
    label: '@@label@@',
    previous: '@@previous@@',
  } + {
    [name + '.' + f]: formats[f](values[name])
    for name in std.objectFields(values)
    for f in std.objectFields(formats)
  },
  // Tokens stand inside JSON strings or as JSON numbers, so the files' text is filled before parsing, in
  // one pass: split on `@` (the generator puts none elsewhere), every fourth part is a token's name
  // (`a@@t@@b` splits to a, '', t, '', b).
  // std.escapeStringJson works char by char (~2 ms a token); only `\` and `"` need escaping unless a
  // control character is there (what escapeStringJson writes as \uXXXX).
  local control(v) = std.length([c for c in std.stringChars(v) if std.codepoint(c) < 32 || (std.codepoint(c) >= 127 && std.codepoint(c) <= 159)]) > 0,
  local jsonEscaped(v) =
    if control(v) then local q = std.escapeStringJson(v); std.substr(q, 1, std.length(q) - 2)
    else std.strReplace(std.strReplace(v, '\\', '\\\\'), '"', '\\"'),
  // Each token's text, computed on its first use and then kept (once() is lazy per field).
  local tokens = once({ [n]: jsonEscaped(tokenFields[n]) for n in std.objectFields(tokenFields) }),
  local token(name) = if std.objectHas(tokens, name) then tokens[name] else error 'mixin: unknown token ' + name,
  // std.makeArray, not a comprehension with `if` and no std.set of the names: in jsonnet 0.18 those are
  // jsonnet code, a tenth of a second each over the dashboards' 2 300 parts.
  local load(text) =
    assert checked;
    local parts = std.split(text, '@');
    std.parseJson(std.join('', std.makeArray(std.floor((std.length(parts) + 1) / 2), function(k) if k % 2 == 1 then token(parts[2 * k]) else parts[2 * k]))),
  local replaceIn(s, table) = std.foldl(function(acc, k) std.strReplace(acc, k, table[k]), std.objectFields(table), s),
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
      '@@previous@@': std.join('', [', ' + p + '=~"$' + p + '"' for p in labels[0:i]]),
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
