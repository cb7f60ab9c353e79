// The example Alertmanager config: the P0 pages and pauses non-core calls through the exporter's gate,
// other critical alerts page, warnings go to a chat/ticket receiver, and the P0 mutes the warnings it
// subsumes for the same job. Users merge it into their own tree; its contract is the labels.
import { listenAddresses, type Config } from '../config/schema.js';

/** Warnings the P0 already says: drift out of band and degraded requests, for the same job. */
export const P0_INHIBITS = ['ZeroPlaneP99DriftOutOfBand', 'ZeroPlaneDegradedRequests'] as const;

export const RECEIVERS = { pager: 'pager', ticket: 'ticket', gate: 'load-shedding-gate' } as const;

export function alertmanagerExample(config: Config): string {
  const g = config.gate;
  const port = /:(\d+)$/.exec(listenAddresses(config.web)[0] ?? '')?.[1] ?? '9185';
  return `# Example Alertmanager routing for the zero-plane-exporter alerting pack (Alertmanager >= 0.22).
# Replace the pager and ticket webhooks with your own receivers (pagerduty_configs, slack_configs, ...).
route:
  receiver: ${RECEIVERS.ticket}
  group_by: [alertname, job]
  group_wait: 30s
  group_interval: 5m
  repeat_interval: 12h
  routes:
    # The P0 pages, and (continue) also reaches the exporter's load-shedding gate.
    - matchers: ['${g.pauseLabel}="${g.pauseValue}"']
      receiver: ${RECEIVERS.pager}
      group_wait: 10s
      repeat_interval: 1h
      continue: true
    # The gate pauses non-core calls while the P0 fires and resumes when it resolves (send_resolved),
    # so it gets every change quickly and a reminder often: a restarted exporter re-learns the state.
    - matchers: ['${g.pauseLabel}="${g.pauseValue}"']
      receiver: ${RECEIVERS.gate}
      group_by: [alertname, job]
      group_wait: 0s
      group_interval: 10s
      repeat_interval: 5m
    - matchers: ['severity="critical"']
      receiver: ${RECEIVERS.pager}
      group_wait: 10s
      repeat_interval: 1h
    - matchers: ['severity="warning"']
      receiver: ${RECEIVERS.ticket}

inhibit_rules:
  # Source and target never overlap: the P0 is critical, its targets are warnings.
  - source_matchers: ['alertname="ZeroPlaneP0DriftWithDegraded"']
    target_matchers:
      - 'severity="warning"'
      - 'alertname=~"${P0_INHIBITS.join('|')}"'
    equal: [job]

receivers:
  - name: ${RECEIVERS.pager}
    webhook_configs:
      - url: http://pager.example.internal/alertmanager
  - name: ${RECEIVERS.ticket}
    webhook_configs:
      - url: http://chat.example.internal/alertmanager
  - name: ${RECEIVERS.gate}
    webhook_configs:
      - url: http://zero-plane-exporter:${port}/api/v1/alerts/webhook
        send_resolved: true
        # With gate.bearerTokenFile set on the exporter, send the same token:
        # http_config:
        #   authorization:
        #     type: Bearer
        #     credentials_file: /etc/alertmanager/zero-plane-gate.token
`;
}
