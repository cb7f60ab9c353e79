// Shared building blocks of the dashboards. Every setting Grafana would otherwise fill in differently per
// version (or the SDK leaves at a useless zero value) is set here explicitly: panel ids and refIds are
// assigned in order, legends are shown, heatmap colour steps are 64, every query reads `${datasource}`.
import type * as cog from '@grafana/grafana-foundation-sdk/cog';
import * as common from '@grafana/grafana-foundation-sdk/common';
import * as dashboard from '@grafana/grafana-foundation-sdk/dashboard';
import * as bargauge from '@grafana/grafana-foundation-sdk/bargauge';
import * as heatmap from '@grafana/grafana-foundation-sdk/heatmap';
import * as prometheus from '@grafana/grafana-foundation-sdk/prometheus';
import * as stat from '@grafana/grafana-foundation-sdk/stat';
import * as timeseries from '@grafana/grafana-foundation-sdk/timeseries';
import type { Grouping } from '../pack/grouping.js';
import { own, type Filter } from './queries.js';

/** Every panel, target and query variable uses the `datasource` variable: no `__inputs`, so file
 * provisioning, the Kubernetes sidecar, the HTTP API and UI import all work unchanged. */
export const DATASOURCE: dashboard.DataSourceRef = { type: 'prometheus', uid: '${datasource}' };

/** Dashboards are generated for this schema version: Grafana 11.6 and 12.0 write it, and every later
 * Grafana 11.x/12.x imports it (newer versions migrate it up; none migrates a newer one down). */
export const SCHEMA_VERSION = 41;

export interface Query {
  expr: string;
  legend: string;
  /** Instant query (one value per series), e.g. totals over `$__range`. */
  instant?: boolean;
  /** `heatmap` turns cumulative `le` buckets into per-bucket rows for the heatmap panel. */
  format?: 'time_series' | 'heatmap';
}

export interface Step {
  value: number | null;
  color: string;
}

/** refIds A, B, C… in the order the queries are given. */
export function refId(index: number): string {
  if (index < 0 || index >= 26) throw new Error(`a panel has at most 26 queries, not ${index + 1}`);
  return String.fromCharCode(65 + index);
}

function target(q: Query, index: number): prometheus.DataqueryBuilder {
  const b = new prometheus.DataqueryBuilder()
    .datasource(DATASOURCE)
    .refId(refId(index))
    .expr(q.expr)
    .legendFormat(q.legend)
    .editorMode(prometheus.QueryEditorMode.Code)
    .format(q.format === 'heatmap' ? prometheus.PromQueryFormat.Heatmap : prometheus.PromQueryFormat.TimeSeries);
  return q.instant ? b.instant() : b.range();
}

function thresholds(steps: readonly Step[]): dashboard.ThresholdsConfigBuilder {
  if (steps[0]?.value !== null) throw new Error('the first threshold step must have value null');
  return new dashboard.ThresholdsConfigBuilder().mode(dashboard.ThresholdsMode.Absolute).steps(steps.map((s) => ({ ...s })));
}

/** `value → text` mappings with a colour each, e.g. 0 → "no" (green), 1 → "P0" (red). */
export function valueText(map: Record<string, { text: string; color: string }>): dashboard.ValueMapping[] {
  const options: Record<string, dashboard.ValueMappingResult> = {};
  Object.entries(map).forEach(([value, r], index) => (options[value] = { text: r.text, color: r.color, index }));
  return [{ type: dashboard.MappingType.ValueToText, options }];
}

/** Red below `target`, green from it: a share that should stay high (hit rate, warm-up efficiency). */
export function healthyFrom(target: number): Step[] {
  return [
    { value: null, color: 'red' },
    { value: target, color: 'green' },
  ];
}

/** Green below `limit`, red from it: what should stay low (degraded requests, a tail share, lag). */
export function healthyBelow(limit: number): Step[] {
  return [
    { value: null, color: 'green' },
    { value: limit, color: 'red' },
  ];
}

/** Green from `low` up to `high`, red outside. */
export function healthyWithin(low: number, high: number): Step[] {
  return [
    { value: null, color: 'red' },
    { value: low, color: 'green' },
    { value: high, color: 'red' },
  ];
}

interface PanelBase {
  title: string;
  description: string;
  queries: Query[];
  unit: string;
  /** Grid width (of 24) and height; by default half a row, 8 high. */
  w?: number;
  h?: number;
  decimals?: number;
  min?: number;
  max?: number;
  noValue?: string;
}

/** What every panel builder shares: id, title, datasource, targets, field defaults, size. */
interface CommonPanelBuilder<T> {
  id(id: number): T;
  title(title: string): T;
  description(description: string): T;
  datasource(ds: dashboard.DataSourceRef): T;
  withTarget(t: cog.Builder<cog.Dataquery>): T;
  unit(unit: string): T;
  decimals(d: number): T;
  min(v: number): T;
  max(v: number): T;
  noValue(v: string): T;
  span(w: number): T;
  height(h: number): T;
}

function applyBase<T extends CommonPanelBuilder<T>>(b: T, p: PanelBase): T {
  b.title(p.title).description(p.description).datasource(DATASOURCE).unit(p.unit).span(p.w ?? 12).height(p.h ?? 8);
  p.queries.forEach((q, i) => b.withTarget(target(q, i)));
  if (p.decimals !== undefined) b.decimals(p.decimals);
  if (p.min !== undefined) b.min(p.min);
  if (p.max !== undefined) b.max(p.max);
  if (p.noValue !== undefined) b.noValue(p.noValue);
  return b;
}

/** A panel whose id is assigned when the dashboard is assembled. */
export interface PanelDraft extends cog.Builder<dashboard.Panel> {
  id(id: number): unknown;
}

export interface StatOptions extends PanelBase {
  steps: Step[];
  mappings?: dashboard.ValueMapping[];
  /** Sparkline under the value (default true). */
  sparkline?: boolean;
}

/** A stat coloured by its thresholds (background), last non-null value of each series. */
export function statPanel(p: StatOptions): PanelDraft {
  const b = applyBase(new stat.PanelBuilder(), p)
    .thresholds(thresholds(p.steps))
    .colorScheme(new dashboard.FieldColorBuilder().mode(dashboard.FieldColorModeId.Thresholds))
    .reduceOptions(new common.ReduceDataOptionsBuilder().calcs(['lastNotNull']).values(false))
    .colorMode(common.BigValueColorMode.Background)
    .graphMode(p.sparkline === false ? common.BigValueGraphMode.None : common.BigValueGraphMode.Area)
    .textMode(common.BigValueTextMode.ValueAndName)
    .justifyMode(common.BigValueJustifyMode.Auto)
    .orientation(common.VizOrientation.Auto);
  if (p.mappings) b.mappings(p.mappings);
  return b;
}

export interface FlagStatOptions extends Omit<PanelBase, 'unit' | 'decimals'> {
  /** How 0 and 1 read, each in its colour (which is also the background's). */
  zero: { text: string; color: string };
  one: { text: string; color: string };
}

/** A 0/1 state in words ("no" / "P0", "DOWN" / "up"): a sparkline of a flag says nothing. */
export function flagStat({ zero, one, ...p }: FlagStatOptions): PanelDraft {
  return statPanel({
    ...p,
    unit: 'none',
    decimals: 0,
    sparkline: false,
    mappings: valueText({ '0': zero, '1': one }),
    steps: [
      { value: null, color: zero.color },
      { value: 1, color: one.color },
    ],
  });
}

export interface TimeseriesOptions extends PanelBase {
  /** Threshold steps drawn as dashed lines at each step's value (first step null = no line). */
  steps?: Step[];
  stacked?: boolean;
  bars?: boolean;
  /** Series matching this regex (by display name) are drawn dashed, e.g. a baseline. */
  dashedSeries?: string;
}

/** A time series with a visible legend and a shared tooltip; optional dashed threshold lines. */
export function timeseriesPanel(p: TimeseriesOptions): PanelDraft {
  const b = applyBase(new timeseries.PanelBuilder(), p)
    .legend(
      new common.VizLegendOptionsBuilder()
        .showLegend(true)
        .displayMode(common.LegendDisplayMode.List)
        .placement(common.LegendPlacement.Bottom)
        .calcs([]),
    )
    .tooltip(new common.VizTooltipOptionsBuilder().mode(common.TooltipDisplayMode.Multi).sort(common.SortOrder.Descending))
    .drawStyle(p.bars ? common.GraphDrawStyle.Bars : common.GraphDrawStyle.Line)
    .lineWidth(1)
    .fillOpacity(p.stacked ? 50 : p.bars ? 80 : 10)
    .showPoints(common.VisibilityMode.Never)
    .spanNulls(false)
    .colorScheme(new dashboard.FieldColorBuilder().mode(dashboard.FieldColorModeId.PaletteClassic))
    .stacking(new common.StackingConfigBuilder().mode(p.stacked ? common.StackingMode.Normal : common.StackingMode.None));
  if (p.steps) {
    b.thresholds(thresholds(p.steps)).thresholdsStyle(
      new common.GraphThresholdsStyleConfigBuilder().mode(common.GraphThresholdsStyleMode.Dashed),
    );
  } else {
    b.thresholdsStyle(new common.GraphThresholdsStyleConfigBuilder().mode(common.GraphThresholdsStyleMode.Off));
  }
  if (p.dashedSeries) {
    b.overrideByRegexp(p.dashedSeries, [{ id: 'custom.lineStyle', value: { fill: 'dash', dash: [10, 10] } }]);
  }
  return b;
}

// Time series presets by what the panel plots; each sets the unit and the axis, the caller what differs.
type TimeseriesPreset = Omit<TimeseriesOptions, 'unit'>;

/** Requests (or responses) per second, stacked by a label so the total reads off the top. */
export function stackedRates(p: TimeseriesPreset): PanelDraft {
  return timeseriesPanel({ unit: 'reqps', min: 0, stacked: true, ...p });
}

/** Counts of events that should not happen, as bars per $__rate_interval (queries end in `> 0`: quiet is "None"). */
export function eventBars(p: TimeseriesPreset): PanelDraft {
  return timeseriesPanel({ unit: 'short', min: 0, noValue: 'None', bars: true, ...p });
}

/** A share (0–1) on an axis from 0. */
export function sharePanel(p: TimeseriesPreset): PanelDraft {
  return timeseriesPanel({ unit: 'percentunit', min: 0, ...p });
}

/** A share that should reach `target` (dashed line), on an axis up to 1. */
export function targetSharePanel({ target, ...p }: TimeseriesPreset & { target: number }): PanelDraft {
  return timeseriesPanel({ unit: 'percentunit', max: 1, steps: healthyFrom(target), ...p });
}

/** Seconds from zero up: latencies, lag. */
export function secondsPanel(p: TimeseriesPreset): PanelDraft {
  return timeseriesPanel({ unit: 's', min: 0, ...p });
}

export interface HeatmapOptions extends PanelBase {
  /** Unit of the y axis (the bucket bounds); `unit` is the cell values'. */
  yUnit: string;
}

/** A heatmap of pre-bucketed data (`format: heatmap`, `calculate: false`) with an explicit 64-step palette. */
export function heatmapPanel(p: HeatmapOptions): PanelDraft {
  return applyBase(new heatmap.PanelBuilder(), p)
    .calculate(false)
    .rowsFrame(new heatmap.RowsHeatmapOptionsBuilder().layout(common.HeatmapCellLayout.Le))
    .yAxis(new heatmap.YAxisConfigBuilder().unit(p.yUnit).axisPlacement(common.AxisPlacement.Left))
    .cellValues(new heatmap.CellValuesBuilder().unit(p.unit))
    .color(
      new heatmap.HeatmapColorOptionsBuilder()
        .mode(heatmap.HeatmapColorMode.Scheme)
        .scheme('Oranges')
        .fill('dark-orange')
        .scale(heatmap.HeatmapColorScale.Exponential)
        .exponent(0.5)
        .steps(64)
        .reverse(false),
    )
    .cellGap(1)
    .showValue(common.VisibilityMode.Never)
    .showLegend()
    .mode(common.TooltipDisplayMode.Single)
    .showYHistogram()
    .showColorScale(true)
    .selectionMode(heatmap.HeatmapSelectionMode.X)
    .exemplarsColor('rgba(255,0,255,0.7)');
}

export interface BarGaugeOptions extends PanelBase {
  /** One colour for every bar, or threshold steps that colour each bar by its value. */
  color: string | Step[];
}

/** Horizontal bars, one per series: totals over the range, or one value per window. */
export function barGaugePanel(p: BarGaugeOptions): PanelDraft {
  return applyBase(new bargauge.PanelBuilder(), p)
    .thresholds(thresholds(typeof p.color === 'string' ? [{ value: null, color: p.color }] : p.color))
    .colorScheme(new dashboard.FieldColorBuilder().mode(dashboard.FieldColorModeId.Thresholds))
    .reduceOptions(new common.ReduceDataOptionsBuilder().calcs(['lastNotNull']).values(false))
    .displayMode(common.BarGaugeDisplayMode.Gradient)
    .valueMode(common.BarGaugeValueMode.Color)
    .namePlacement(common.BarGaugeNamePlacement.Auto)
    .showUnfilled(true)
    .sizing(common.BarGaugeSizing.Auto)
    .orientation(common.VizOrientation.Horizontal)
    .legend(new common.VizLegendOptionsBuilder().showLegend(false).displayMode(common.LegendDisplayMode.List).placement(common.LegendPlacement.Bottom).calcs([]));
}

export interface Section {
  title: string;
  /** Collapsed rows hold their panels and only query them when opened. */
  collapsed?: boolean;
  panels: PanelDraft[];
}

export interface DashboardMeta {
  uid: string;
  title: string;
  description: string;
  tags: string[];
}

/**
 * A query variable, multi-value with All. `allValue` is `.+` for the labels every series has (the
 * aggregation labels and `instance`, as grafana/dashboard-linter asks) and `.*` for model, route and
 * cohort, whose value may be empty (no cohort).
 */
function queryVariable(name: string, query: string, allValue: string): dashboard.QueryVariableBuilder {
  return new dashboard.QueryVariableBuilder(name)
    .label(title(name))
    .datasource(DATASOURCE)
    .query(query)
    .refresh(dashboard.VariableRefresh.OnTimeRangeChanged)
    .sort(dashboard.VariableSort.AlphabeticalAsc)
    .multi(true)
    .includeAll(true)
    .allValue(allValue)
    .current({ selected: true, text: ['All'], value: ['$__all'] });
}

/** `job` → `Job` (the label dashboard-linter expects). */
const title = (name: string) => `${name.charAt(0).toUpperCase()}${name.slice(1)}`;

export interface VariableQuery {
  name: string;
  query: string;
  allValue: '.+' | '.*';
}

/**
 * The query variables in order, each narrowed by the ones before it: one per aggregation label (read
 * from the exporter's build info under pack.selector), `instance`, then model, route and cohort.
 */
export function variableQueries(g: Grouping): VariableQuery[] {
  const info = (matchers: string, label: string) => `label_values(zero_plane_exporter_build_info{${g.selector}${matchers}}, ${label})`;
  const groupVars = g.labels.map((label, i) => ({ name: label, query: info(g.previousVariableMatchers(i), label), allValue: '.+' as const }));
  const requests = (filters: Filter[], label: string) => `label_values(${own(g, 'zero_plane_requests_total', filters)}, ${label})`;
  return [
    ...groupVars,
    { name: 'instance', query: info(`, ${g.variableMatchers}`, 'instance'), allValue: '.+' },
    { name: 'model', query: requests([], 'model'), allValue: '.*' },
    { name: 'route', query: requests(['model'], 'route'), allValue: '.*' },
    { name: 'cohort', query: requests(['model', 'route'], 'cohort'), allValue: '.*' },
  ];
}

export interface DashboardOptions {
  grouping: Grouping;
  /** Grafana's `editable` (dashboards.editable). */
  editable: boolean;
}

/** Builds one dashboard: variables, links to its siblings, and the sections with ids 1, 2, 3… in order. */
export function buildDashboard(meta: DashboardMeta, sections: Section[], opts: DashboardOptions): dashboard.Dashboard {
  const b = new dashboard.DashboardBuilder(meta.title)
    .uid(meta.uid)
    .description(meta.description)
    .tags(meta.tags);
  if (opts.editable) b.editable();
  else b.readonly();
  b
    .timezone('browser')
    .tooltip(dashboard.DashboardCursorSync.Crosshair)
    .time({ from: 'now-1h', to: 'now' })
    .refresh('30s')
    .version(1)
    .link(
      new dashboard.DashboardLinkBuilder('Zero-Plane dashboards')
        .type(dashboard.DashboardLinkType.Dashboards)
        .tags(['zero-plane'])
        .asDropdown(true)
        .includeVars(true)
        .keepTime(true)
        .targetBlank(false)
        .icon('external link')
        .tooltip('')
        .url(''),
    )
    .withVariable(new dashboard.DatasourceVariableBuilder('datasource').label('Data source').type('prometheus'));
  for (const v of variableQueries(opts.grouping)) b.withVariable(queryVariable(v.name, v.query, v.allValue));

  let nextId = 1;
  for (const s of sections) {
    const row = new dashboard.RowBuilder(s.title).id(nextId++);
    if (s.collapsed) {
      row.collapsed(true);
      for (const p of s.panels) {
        p.id(nextId++);
        row.withPanel(p);
      }
      b.withRow(row);
    } else {
      b.withRow(row);
      for (const p of s.panels) {
        p.id(nextId++);
        b.withPanel(p);
      }
    }
  }
  const built = b.build();
  // Ids are assigned after each panel is configured; list them first, as Grafana does, for readable diffs.
  built.panels = (built.panels ?? []).map((p) => {
    const row = leadingKeys(p as unknown as Record<string, unknown>);
    if (Array.isArray(row.panels)) row.panels = (row.panels as Record<string, unknown>[]).map(leadingKeys);
    return row as unknown as dashboard.Panel | dashboard.RowPanel;
  });
  // The SDK gives every variable interval-only fields (auto, auto_min, auto_count); Grafana ignores them
  // on other types, and a strict schema check flags them.
  for (const v of built.templating.list ?? []) {
    const loose = v as unknown as Record<string, unknown>;
    delete loose.auto;
    delete loose.auto_min;
    delete loose.auto_count;
  }
  return built;
}

function leadingKeys(panel: Record<string, unknown>): Record<string, unknown> {
  const { type, id, title, description, ...rest } = panel;
  return { type, id, title, ...(description === undefined ? {} : { description }), ...rest };
}

/** The file content: 2-space JSON and a trailing newline. */
export function toJson(d: dashboard.Dashboard): string {
  return `${JSON.stringify(d, null, 2)}\n`;
}
