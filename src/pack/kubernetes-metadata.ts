// The labels and annotations the Kubernetes objects carry, from `deploy.kubernetes`: what
// kube-prometheus-stack selects on (`release: <helm release>` for its Prometheus, `grafana_dashboard: "1"`
// and the folder annotation for its Grafana sidecar). One place, so alerts/kubernetes/, dashboards/kubernetes/
// and deploy/kubernetes/ label the same objects the same way; in pack/, the lowest of the three rooms that use it.
import type { Config } from '../config/schema.js';
import { ruleGroups } from './rules.js';

export type Labels = Record<string, string>;

/** On every object: who it belongs to, plus `deploy.kubernetes.labels`. */
export function commonLabels(config: Config, component: string): Labels {
  return { 'app.kubernetes.io/name': 'zero-plane-exporter', 'app.kubernetes.io/component': component, 'app.kubernetes.io/part-of': 'zero-plane', ...config.deploy.kubernetes.labels };
}

/** ServiceMonitor, PodMonitor, PrometheusRule: kube-prometheus-stack's Prometheus selects them by `release`. */
export function prometheusSelectedLabels(config: Config, component: string): Labels {
  const release = config.deploy.kubernetes.release;
  return { ...commonLabels(config, component), ...(release === '' ? {} : { release }) };
}

/** The PrometheusRule holding the pack's rule groups. */
export function prometheusRule(config: Config) {
  return {
    apiVersion: 'monitoring.coreos.com/v1',
    kind: 'PrometheusRule',
    metadata: { name: config.deploy.kubernetes.name, labels: { ...prometheusSelectedLabels(config, 'alert-rules'), role: 'alert-rules' } },
    spec: { groups: ruleGroups(config) },
  };
}

/** A dashboard's ConfigMap, labelled and annotated for the Grafana sidecar. */
export function dashboardConfigMap(config: Config, uid: string, json: string): object {
  const d = config.deploy.kubernetes.dashboards;
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: `${uid}-dashboard`,
      labels: { [d.label]: d.labelValue, ...commonLabels(config, 'dashboard') },
      // kube-prometheus-stack: grafana.sidecar.dashboards.folderAnnotation set to this key, and
      // provider.foldersFromFilesStructure: true, put the dashboard in this folder.
      annotations: { [d.folderAnnotation]: d.folder },
    },
    data: { [`${uid}.json`]: json },
  };
}
