// The two things a deployment changes in every query of the pack: the labels it aggregates by
// (pack.aggregationLabels, e.g. [cluster, namespace, job]) and the matchers that find the exporter's own
// series (pack.selector). Every generator writes them through a Grouping, so the mixin can render the
// same pack with tokens in their place and let jsonnet fill them in from its _config.
import type { Config } from '../config/schema.js';

export interface Grouping {
  /** The aggregation labels, in order (in a template: one placeholder label). */
  labels: readonly string[];
  /** `job` or `cluster, namespace, job`: the list of every `by (…)` and `on (…)`. */
  by: string;
  /** The group in alert text: `{{ $labels.cluster }}/{{ $labels.namespace }}/{{ $labels.job }}`. */
  labelsText: string;
  /** The group's labels as words in prose: `cluster/namespace/job`. */
  labelWords: string;
  /** Matchers of a `query` template for the alert's own group (`job='%s'`) and its printf arguments (`$labels.job`). */
  queryMatchers: string;
  queryArgs: string;
  /** The exporter's own series: `job="zero-plane-exporter"`. */
  selector: string;
  /** Dashboards: one `=~` matcher per aggregation label on its variable, `cluster=~"$cluster", job=~"$job"`. */
  variableMatchers: string;
  /** Dashboards: the group in a legend, `{{cluster}} {{namespace}} {{job}}`. */
  legend: string;
  /** Dashboards: `, cluster=~"$cluster"` for the variable of label `i`, narrowed by the labels before it. */
  previousVariableMatchers(i: number): string;
}

export function grouping(labels: readonly string[], selector: string): Grouping {
  return {
    labels,
    by: labels.join(', '),
    labelsText: labels.map((l) => `{{ $labels.${l} }}`).join('/'),
    labelWords: labels.join('/'),
    queryMatchers: labels.map((l) => `${l}='%s'`).join(','),
    queryArgs: labels.map((l) => `$labels.${l}`).join(' '),
    selector,
    variableMatchers: labels.map((l) => `${l}=~"$${l}"`).join(', '),
    legend: labels.map((l) => `{{${l}}}`).join(' '),
    previousVariableMatchers: (i) =>
      labels
        .slice(0, i)
        .map((l) => `, ${l}=~"$${l}"`)
        .join(''),
  };
}

export function groupingOf(config: Config): Grouping {
  return grouping(config.pack.aggregationLabels, config.pack.selector);
}

/** `@@by@@`, …: what the mixin's jsonnet replaces (mixin/mixin.libsonnet lists the same names). */
export const TOKEN = (name: keyof Omit<Grouping, 'labels' | 'previousVariableMatchers'> | 'label' | 'previous' | 'runbookUrl') => `@@${name}@@`;

/** A Grouping whose every string is a token: the pack rendered with it is the mixin's template. */
export function templateGrouping(): Grouping {
  return {
    labels: [TOKEN('label')],
    by: TOKEN('by'),
    labelsText: TOKEN('labelsText'),
    labelWords: TOKEN('labelWords'),
    queryMatchers: TOKEN('queryMatchers'),
    queryArgs: TOKEN('queryArgs'),
    selector: TOKEN('selector'),
    variableMatchers: TOKEN('variableMatchers'),
    legend: TOKEN('legend'),
    previousVariableMatchers: () => TOKEN('previous'),
  };
}

/** `metric{selector, extra…}`: one of the exporter's own series, as scraped. */
export function own(g: Grouping, metric: string, ...extra: string[]): string {
  return `${metric}{${[g.selector, ...extra].join(', ')}}`;
}

/** `by (job, le)`: the aggregation labels, then `extra`. */
export function by(g: Grouping, ...extra: string[]): string {
  return `by (${[g.by, ...extra].join(', ')})`;
}

/** `on (job, cohort)`: joins on the aggregation labels, then `extra`. */
export function on(g: Grouping, ...extra: string[]): string {
  return `on (${[g.by, ...extra].join(', ')})`;
}
