// The example Alertmanager config: the P0 pages and pauses non-core calls through the exporter's gate,
// other critical alerts page (PagerDuty), warnings go to chat (Slack). One incident pages once: alerts
// group by name and the aggregation labels, and the P0 mutes what it already says for the same group.
// Users merge it into their own tree; its contract is the labels.
import { listenAddresses, type Config } from '../config/schema.js';
import { formatDuration } from '../config/duration.js';
import { P0_ALERT } from './alert-specs.js';
import { DRIFT_CREEPING_ALERT, WARMUP_SLIDING_ALERT } from './early-warning.js';
import { SLO_ALERTS } from './slos.js';

/**
 * What the P0 mutes for the same aggregation group: the two warnings it subsumes, and the canary and
 * latency-budget alerts of the same incident. When the whole group's p99 is above the ceiling, a canary
 * cohort's is too: the canary is not the cause, and rolling it back fixes nothing (live on Alertmanager
 * 0.25 with the old example, ZeroPlaneCanaryRollback paged a second time 8 min into a P0); the latency
 * budget burns with it.
 */
export const P0_INHIBITS = ['ZeroPlaneP99DriftOutOfBand', 'ZeroPlaneDegradedRequests', 'ZeroPlaneCanaryRollback', SLO_ALERTS.latency] as const;

const ABSENT_ALERT = 'ZeroPlaneExporterAbsent';
const GONE_ALERT = 'ZeroPlaneExporterGone';

/**
 * The labels `absent(up{<selector>})` gives its result: each `name="value"` matcher of pack.selector
 * (not =~, != or !~), in words for the comment.
 */
function absentLabels(config: Config): string {
  const names = [...config.pack.selector.matchAll(/(?:^|,)\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"(?:[^"\\]|\\.)*"/g)].map((m) => m[1] as string);
  return names.length === 0 ? 'none with this selector' : `here ${names.join(', ')}`;
}

const BURN_ALERTS = `${SLO_ALERTS['hit-rate']}|${SLO_ALERTS.latency}`;

export function receivers(config: Config) {
  const a = config.alertmanager;
  return { pager: a.pager.name, chat: a.chat.name, gate: a.gate.name };
}

/** The exporter's webhook as the example reaches it. */
export function gateUrl(config: Config): string {
  const port = /:(\d+)$/.exec(listenAddresses(config.web)[0] ?? '')?.[1] ?? '9185';
  return config.alertmanager.gate.url ?? `http://zero-plane-exporter:${port}/api/v1/alerts/webhook`;
}

/**
 * How each cluster's P0 reaches its own gate: one route per cluster, each to a receiver with that
 * cluster's gate URL (Alertmanager cannot template a webhook URL). Only when cluster is an aggregation
 * label, so that the P0 carries it; written as a comment, since the clusters are the user's.
 */
function perCluster(config: Config): string {
  const labels = config.pack.aggregationLabels;
  const label = labels.includes('cluster') ? 'cluster' : undefined;
  const g = config.gate;
  const r = receivers(config);
  const how = label === undefined ? ' (add cluster to pack.aggregationLabels first)' : '';
  return `
    # One Alertmanager for several clusters${how}:
    # route each cluster's P0 to its own gate, one route and receiver per cluster, above this one. Each
    # gate has gate.scope {cluster: <its cluster>} and pauses for its own cluster's P0 only, whatever it is sent:
    #   - matchers: ['${g.pauseLabel}="${g.pauseValue}"', '${label ?? 'cluster'}="a"']
    #     receiver: ${r.gate}-a      # webhook_configs: [{url: <cluster a's gate>, send_resolved: true}]
    #     group_by: [alertname, ${labels.join(', ')}${label === undefined ? ', cluster' : ''}]
    #     group_wait: 0s
    #     group_interval: 10s
    #     repeat_interval: 5m`;
}

export function alertmanagerExample(config: Config): string {
  const g = config.gate;
  const a = config.alertmanager;
  const r = receivers(config);
  const labels = config.pack.aggregationLabels.join(', ');
  return `# Example Alertmanager routing for the zero-plane-exporter alerting pack (Alertmanager >= 0.25).
# Merge its routes, inhibit rules and receivers into your config. Every place to fill in is marked
# FILL IN; \`generate\` writes them from the exporter config (alertmanager.*, pack.aggregationLabels).
#
# One incident pages once:
# - every page (severity critical) of one [${labels}] is one PagerDuty incident: the pager route groups
#   by those labels only, so a canary rollback or an SLO burn that joins a firing P0 updates the same
#   incident (same dedup_key) instead of opening another; a firing group is sent again only after
#   repeat_interval (${formatDuration(a.repeatInterval)}), which PagerDuty folds into the open incident too;
# - the P0 mutes what it already says for the same [${labels}]: the band and degraded warnings, and the
#   canary and latency-budget alerts of the same incident;
# - an SLO's burn-rate page mutes its ticket;
# - a hard alert mutes its early warning (warm-up efficiency low: sliding; band or P0: drift creeping);
# - no exporter target at all (${ABSENT_ALERT}) mutes ${GONE_ALERT} of the groups it covers;
# - the alerts keep firing through a brief dip (keep_firing_for in the rules), so a dip is not a
#   resolve followed by a second page.
route:
  receiver: ${r.chat}
  group_by: [alertname, ${labels}]
  group_wait: 30s
  group_interval: 5m
  repeat_interval: ${formatDuration(a.repeatInterval)}
  routes:
    # Pages: one alert group, so one PagerDuty incident, per [${labels}]. continue: the P0 also reaches
    # the gate below.
    - matchers: ['severity="critical"']
      receiver: ${r.pager}
      group_by: [${labels}]
      group_wait: 10s
      continue: true
    # The gate pauses non-core calls while the P0 fires and resumes when it resolves (send_resolved).
    # Each exporter also reads the firing P0 from this Alertmanager's API (gate.alertmanagers) every
    # gate.pollInterval, so every replica agrees whichever one a notification reached; the webhook is
    # the fast path (a push makes the gate read at once), the short repeat a reminder for push-only gates.${perCluster(config)}
    - matchers: ['${g.pauseLabel}="${g.pauseValue}"']
      receiver: ${r.gate}
      group_by: [alertname, ${labels}]
      group_wait: 0s
      group_interval: 10s
      repeat_interval: 5m
    - matchers: ['severity="warning"']
      receiver: ${r.chat}

inhibit_rules:
  # Source and target never overlap: the P0 is not among its targets.
  - source_matchers: ['alertname="${P0_ALERT}"']
    target_matchers:
      - 'alertname=~"${P0_INHIBITS.join('|')}"'
    equal: [${labels}]
  # A burn-rate page (severity critical) mutes the ticket (severity warning) of the same SLO and group.
  - source_matchers: ['alertname=~"${BURN_ALERTS}"', 'severity="critical"']
    target_matchers: ['alertname=~"${BURN_ALERTS}"', 'severity="warning"']
    equal: [alertname, ${labels}]
  # A hard alert mutes its own early warning for the same group: the warning has nothing to add then.
  - source_matchers: ['alertname="ZeroPlaneWarmupEfficiencyLow"']
    target_matchers: ['alertname="${WARMUP_SLIDING_ALERT}"']
    equal: [${labels}]
  - source_matchers: ['alertname=~"ZeroPlaneP99DriftOutOfBand|${P0_ALERT}"']
    target_matchers: ['alertname="${DRIFT_CREEPING_ALERT}"']
    equal: [${labels}]
  # No target left at all mutes "this group's target is gone" for the groups it covers. absent() carries
  # only the selector's = matchers (${absentLabels(config)}), so this mutes a group only when those
  # name all of [${labels}] (or external labels add the rest); otherwise both fire, never a wrong mute.
  - source_matchers: ['alertname="${ABSENT_ALERT}"']
    target_matchers: ['alertname="${GONE_ALERT}"']
    equal: [${labels}]

receivers:
  - name: ${r.pager}
    pagerduty_configs:
      # FILL IN: a file holding the routing (integration) key of a PagerDuty Events API v2 service.
      - routing_key_file: ${a.pager.routingKeyFile}
        send_resolved: true
        severity: critical
        description: '{{ .Status | toUpper }} {{ range .Alerts.Firing }}{{ .Labels.alertname }} {{ end }}for{{ range .GroupLabels.SortedPairs }} {{ .Name }}={{ .Value }}{{ end }}'
        links:
          - href: '{{ (index .Alerts 0).Annotations.runbook_url }}'
            text: runbook
  - name: ${r.chat}
    slack_configs:
      # FILL IN: a file holding the Slack incoming-webhook URL, and the channel it posts to.
      - api_url_file: ${a.chat.apiUrlFile}
        channel: '${a.chat.channel}'
        send_resolved: true
        title: '[{{ .Status | toUpper }}] {{ .CommonLabels.alertname }}'
        text: '{{ range .Alerts }}{{ .Annotations.description }} <{{ .Annotations.runbook_url }}|runbook>{{ "\\n" }}{{ end }}'
  - name: ${r.gate}
    webhook_configs:
      # FILL IN: the exporter's address as Alertmanager reaches it.
      - url: ${gateUrl(config)}
        send_resolved: true
        # With gate.bearerTokenFile set on the exporter, send the same token:
        # http_config:
        #   authorization:
        #     type: Bearer
        #     credentials_file: /etc/alertmanager/zero-plane-gate.token
`;
}
