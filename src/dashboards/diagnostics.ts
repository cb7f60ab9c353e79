// "Zero-Plane diagnostics": what the response and request headers say (downgrade reasons, cached responses,
// throttle modes, status classes, opt-in header states and defects) and the exporter's own health.
import type { Config } from '../config/schema.js';
import { formatDuration } from '../config/duration.js';
import {
  barGaugePanel,
  buildDashboard,
  eventBars,
  flagStat,
  healthyBelow,
  secondsPanel,
  sharePanel,
  stackedRates,
  timeseriesPanel,
  type Section,
} from './panels.js';
import { groupingOf, type Grouping } from '../pack/grouping.js';
import { FILTERS, increase, own, RANGE, rate, ratioOfRates, rawSignal } from './queries.js';
import { pct, TAGS } from './shared.js';

export const DIAGNOSTICS_UID = 'zero-plane-diagnostics';

export function diagnosticsDashboard(config: Config, g: Grouping = groupingOf(config)) {
  const h = config.headers;
  const w = formatDuration(config.pack.rateWindow);
  const all = FILTERS;
  const jobOnly = 'The counter has no model, route or cohort label: those filters do not apply.';
  const stalledAfter = config.pack.stalledAfter / 1000;
  const req = 'zero_plane_requests_total';
  const cached = 'zero_plane_cached_responses_total';

  const responses: Section = {
    title: 'Response headers',
    panels: [
      stackedRates({
        title: 'Downgrades by reason',
        description: `Requests downgraded off Zero-Plane per second, by the ${h.downgradeReason.name} value (bounded to ${config.metrics.downgradeReasonLimit} reasons; later ones are __other__). ${jobOnly}`,
        queries: [{ expr: `sum by (reason) (${rate(own(g, 'zero_plane_downgrades_total', []))})`, legend: '{{reason}}' }],
      }),
      barGaugePanel({
        title: 'Downgrades by reason over the time range',
        description: `Requests downgraded off Zero-Plane in the selected time range, by reason. ${jobOnly}`,
        queries: [
          {
            expr: `sort_desc(sum by (reason) (${increase(own(g, 'zero_plane_downgrades_total', []), RANGE)}))`,
            legend: '{{reason}}',
            instant: true,
          },
        ],
        unit: 'none',
        decimals: 0,
        min: 0,
        noValue: 'No downgrades',
        color: 'orange',
      }),
      stackedRates({
        title: 'Cached responses',
        description: `Responses per second with ${h.cached.name}: ${h.cached.value}. The counter has no cohort label: the cohort filter does not apply.`,
        queries: [{ expr: `sum by (model, route) (${rate(own(g, cached, ['model', 'route']))})`, legend: '{{model}} {{route}}' }],
        w: 8,
      }),
      sharePanel({
        title: 'Cached share of requests',
        description: 'Cached responses / all requests, for the selected jobs, models and routes (the cohort filter does not apply to either side).',
        queries: [{ expr: ratioOfRates(own(g, cached, ['model', 'route']), own(g, req, ['model', 'route'])), legend: 'cached share' }],
        w: 8,
      }),
      stackedRates({
        title: 'Throttle modes',
        description: `Requests per second by the ${h.delayProfile.modeMember} member of ${h.delayProfile.name}. ${jobOnly}`,
        queries: [{ expr: `sum by (mode) (${rate(own(g, 'zero_plane_throttle_mode_total', []))})`, legend: '{{mode}}' }],
        w: 8,
      }),
      stackedRates({
        title: 'Status classes',
        description: 'Requests per second by HTTP status class, Zero-Plane hits and fallbacks together. All filters apply.',
        queries: [{ expr: `sum by (status_class) (${rate(own(g, req, all))})`, legend: '{{status_class}}' }],
      }),
      sharePanel({
        title: 'Non-2xx share of requests',
        description: 'Share of requests whose status is not 2xx. All filters apply.',
        queries: [{ expr: ratioOfRates(own(g, req, all, 'status_class!="2xx"'), own(g, req, all)), legend: 'non-2xx share' }],
      }),
    ],
  };

  const optIn: Section = {
    title: `Opt-in request header (${h.optIn.name})`,
    panels: [
      stackedRates({
        title: 'Opt-in header states',
        description:
          `Requests per second by the state of ${h.optIn.name}: valid (exactly "${h.optIn.value}"), missing, or malformed. ` +
          `Counted only when the log carries request headers. ${jobOnly}`,
        queries: [{ expr: `sum by (state) (${rate(own(g, 'zero_plane_opt_in_header_total', []))})`, legend: '{{state}}' }],
      }),
      eventBars({
        title: 'Malformed opt-in headers by defect',
        description:
          `Malformed ${h.optIn.name} values per $__rate_interval, by defect (invisible_char, whitespace, case, value). ` +
          `ZeroPlaneOptInHeaderMalformed fires on any. ${jobOnly}`,
        queries: [
          {
            expr: `sum by (defect) (${increase(own(g, 'zero_plane_opt_in_header_total', [], 'state="malformed"'))}) > 0`,
            legend: '{{defect}}',
          },
        ],
      }),
    ],
  };

  const health: Section = {
    title: 'Exporter health',
    panels: [
      flagStat({
        title: 'Exporter scraped',
        description:
          `Whether Prometheus can scrape each exporter instance: up{${g.selector}}, the series ` +
          'ZeroPlaneExporterDown alerts on (pack.selector).',
        queries: [{ expr: own(g, 'up', []), legend: '{{instance}}' }],
        noValue: 'No target',
        zero: { text: 'DOWN', color: 'red' },
        one: { text: 'up', color: 'green' },
        w: 6,
      }),
      flagStat({
        title: 'Response headers found',
        description:
          'Per source: whether its records carry a Zero-Plane response header where its input preset looks ' +
          `(zero_plane_exporter_headers_unseen, decided after input.headerWatch: ${config.input.headerWatch.records} records or ` +
          `${formatDuration(config.input.headerWatch.duration)}). NOT FOUND: every request counts as a non-hit; ZeroPlaneHeadersNotFound fires and the exporter's log names the fix.`,
        queries: [{ expr: own(g, 'zero_plane_exporter_headers_unseen', []), legend: '{{instance}} {{source}}' }],
        noValue: 'Not decided yet',
        zero: { text: 'found', color: 'green' },
        one: { text: 'NOT FOUND', color: 'red' },
        w: 6,
      }),
      timeseriesPanel({
        title: 'Log lines read per source',
        description: 'Lines per second read from each source (the file pattern as configured, or stdin), per instance.',
        queries: [{ expr: `sum by (instance, source) (${rate(own(g, 'zero_plane_exporter_lines_total', []))})`, legend: '{{instance}} {{source}}' }],
        unit: 'short',
        min: 0,
        w: 12,
      }),
      timeseriesPanel({
        title: 'Parse errors by reason',
        description: 'Log lines skipped per second because they could not be used as a record, by reason.',
        queries: [{ expr: `sum by (reason) (${rate(own(g, 'zero_plane_exporter_parse_errors_total', []))}) > 0`, legend: '{{reason}}' }],
        unit: 'short',
        min: 0,
        noValue: 'None',
        stacked: true,
      }),
      sharePanel({
        title: 'Parse error ratio',
        description:
          `Skipped lines / lines read over ${w}, per ${g.labelWords}: what ZeroPlaneParseErrorsHigh compares, for the selected ` +
          `instances. It fires above ${pct(config.signals.parseErrorRatioMax)} (dashed line).`,
        queries: [{ expr: rawSignal(config, g, { signal: 'parseErrorRatio', window: config.pack.rateWindow }), legend: g.legend }],
        steps: healthyBelow(config.signals.parseErrorRatioMax),
      }),
      secondsPanel({
        title: 'Read lag',
        description:
          'Age of the newest record read from each source: time() - zero_plane_exporter_last_record_timestamp_seconds (the record\'s own ' +
          `event time). ZeroPlaneLogSourceStalled fires above ${formatDuration(config.pack.stalledAfter)} (dashed line).`,
        queries: [{ expr: `time() - ${own(g, 'zero_plane_exporter_last_record_timestamp_seconds', [])}`, legend: '{{instance}} {{source}}' }],
        steps: healthyBelow(stalledAfter),
      }),
      eventBars({
        title: 'Label overflow',
        description:
          `Label values replaced by __other__ per $__rate_interval, by label: model, route and cohort keep at most ` +
          `${config.metrics.labelValueLimit} values each, reason ${config.metrics.downgradeReasonLimit}. Any overflow merges series.`,
        queries: [{ expr: `sum by (label) (${increase(own(g, 'zero_plane_exporter_label_overflow_total', []))}) > 0`, legend: '{{label}}' }],
      }),
      eventBars({
        title: 'Source errors',
        description: 'Problems reading a source (missing file, permission denied, read error) per $__rate_interval; the source is retried.',
        queries: [
          {
            expr: `sum by (instance, source, reason) (${increase(own(g, 'zero_plane_exporter_source_errors_total', []))}) > 0`,
            legend: '{{instance}} {{source}} {{reason}}',
          },
        ],
      }),
      eventBars({
        title: 'Header parse errors',
        description:
          'Structured-field headers that did not parse, per $__rate_interval, by header; the request still counts, without what the header says.',
        queries: [
          { expr: `sum by (header) (${increase(own(g, 'zero_plane_exporter_header_parse_errors_total', []))}) > 0`, legend: '{{header}}' },
        ],
      }),
    ],
  };

  return buildDashboard(
    {
      uid: DIAGNOSTICS_UID,
      title: 'Zero-Plane diagnostics',
      description:
        'Why the signals look the way they do: downgrade reasons, cached responses, throttle modes, status classes, opt-in header ' +
        'states and defects, and the health of zero-plane-exporter itself (lines read, parse errors, read lag, label overflow). ' +
        'Generated by zero-plane-exporter from its config; do not edit, regenerate.',
      tags: TAGS,
    },
    [responses, optIn, health],
    { grouping: g, editable: config.dashboards.editable },
  );
}
