// The receivers of the example Alertmanager config, on loopback: a PagerDuty Events API v2 endpoint that
// keeps incidents the way PagerDuty does (a trigger on an open incident with the same dedup_key is not a
// new page; a trigger after a resolve is), and a Slack incoming webhook. loopbackAlertmanager() rewrites
// the committed example to reach them, so a test runs the real pagerduty_configs and slack_configs.
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { freePort } from './processes.js';

/** The alert names a page's summary lists: the example's description is `FIRING A B for job=…`. */
export function pagedAlerts(e: PagerDutyEvent): string[] {
  const words = (e.payload?.summary ?? '').split(' ');
  return words.slice(1, words.indexOf('for'));
}

export interface PagerDutyEvent {
  routing_key: string;
  dedup_key: string;
  event_action: 'trigger' | 'acknowledge' | 'resolve';
  payload?: { summary?: string; severity?: string; custom_details?: { firing?: string; num_firing?: string } };
  /** When the sink received it (ms since the epoch). */
  at: number;
}

export interface Sink {
  url: string;
  /** Every PagerDuty event, in arrival order. */
  pagerDuty: PagerDutyEvent[];
  /** Every Slack message body. */
  slack: unknown[];
  /** Pages: triggers that opened an incident (none open for that dedup_key), in order. */
  pages(): PagerDutyEvent[];
  close(): Promise<void>;
}

export async function startSink(): Promise<Sink> {
  const pagerDuty: PagerDutyEvent[] = [];
  const slack: unknown[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      if (req.url === '/v2/enqueue') {
        const event = { ...(JSON.parse(body) as Omit<PagerDutyEvent, 'at'>), at: Date.now() };
        pagerDuty.push(event);
        res.writeHead(202, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ status: 'success', message: 'Event processed', dedup_key: event.dedup_key }));
        return;
      }
      if (req.url === '/slack') slack.push(JSON.parse(body));
      res.end('ok');
    });
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${port}`,
    pagerDuty,
    slack,
    pages() {
      const open = new Set<string>();
      const opened: PagerDutyEvent[] = [];
      for (const e of pagerDuty) {
        if (e.event_action === 'trigger' && !open.has(e.dedup_key)) {
          open.add(e.dedup_key);
          opened.push(e);
        }
        if (e.event_action === 'resolve') open.delete(e.dedup_key);
      }
      return opened;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export interface AmConfig {
  route: Record<string, unknown> & { routes: Record<string, unknown>[] };
  inhibit_rules: Record<string, unknown>[];
  receivers: {
    name: string;
    pagerduty_configs?: Record<string, unknown>[];
    slack_configs?: Record<string, unknown>[];
    webhook_configs?: Record<string, unknown>[];
  }[];
}

export interface LoopbackOptions {
  /** Where the secret files go. */
  dir: string;
  sink: Sink;
  /** The exporter's gate webhook; unset: the sink. */
  gateUrl?: string;
  gateTokenFile?: string;
  /** group_wait and group_interval of every route (the committed ones are minutes). */
  groupWait?: string;
  groupInterval?: string;
  /** Changes the test makes to the parsed config before it is written (e.g. a control without an inhibit rule). */
  edit?: (config: AmConfig) => void;
}

/** The committed example as Alertmanager text, every receiver sent to the loopback sink (or the exporter's gate). */
export function loopbackAlertmanager(exampleText: string, o: LoopbackOptions): string {
  const am = parse(exampleText) as AmConfig;
  const routingKey = join(o.dir, 'pagerduty-routing-key');
  writeFileSync(routingKey, 'test-routing-key-0123456789abcdef\n');
  const slackUrl = join(o.dir, 'slack-api-url');
  writeFileSync(slackUrl, `${o.sink.url}/slack\n`);
  let rewritten = 0;
  for (const r of am.receivers) {
    for (const pd of r.pagerduty_configs ?? []) {
      pd.routing_key_file = routingKey;
      pd.url = `${o.sink.url}/v2/enqueue`;
      rewritten++;
    }
    for (const s of r.slack_configs ?? []) {
      s.api_url_file = slackUrl;
      rewritten++;
    }
    for (const h of r.webhook_configs ?? []) {
      h.url = o.gateUrl ?? `${o.sink.url}/gate`;
      if (o.gateTokenFile) h.http_config = { authorization: { type: 'Bearer', credentials_file: o.gateTokenFile } };
      rewritten++;
    }
  }
  if (rewritten !== 3) throw new Error(`expected 3 receiver configs to rewrite, found ${rewritten}`);
  o.edit?.(am);
  for (const route of [am.route, ...am.route.routes]) {
    if (o.groupWait !== undefined) route.group_wait = o.groupWait;
    if (o.groupInterval !== undefined) route.group_interval = o.groupInterval;
  }
  return stringify(am);
}
