// The body Alertmanager POSTs to a webhook receiver (notify/webhook Message, "version": "4"):
// template.Data (receiver, status, alerts, groupLabels, commonLabels, commonAnnotations, externalURL)
// plus version, groupKey and truncatedAlerts. Only what the gate acts on is required; every other known
// field is typed but forgiving (a malformed one is dropped, not rejected), and unknown keys are kept and
// ignored, so a newer Alertmanager that adds fields never stops a P0 from pausing non-core calls.
import { z } from 'zod';

const kv = z.record(z.string(), z.string());
/** Go's time.Time JSON (RFC 3339, up to nanoseconds, `Z` or an offset). */
const timestamp = z.iso.datetime({ offset: true });
/** Optional and never fatal: a value of the wrong type becomes undefined. */
const lenient = <T extends z.ZodType>(schema: T) => schema.optional().catch(undefined);

export const webhookAlertSchema = z.looseObject({
  status: z.enum(['firing', 'resolved']),
  labels: kv,
  startsAt: timestamp,
  /** Alertmanager's hash of the label set (16 hex digits): the identity of the alert across notifications. */
  fingerprint: z.string().min(1).max(128),
  annotations: lenient(kv),
  endsAt: lenient(z.string()),
  generatorURL: lenient(z.string()),
});

export const webhookPayloadSchema = z.looseObject({
  alerts: z.array(webhookAlertSchema),
  version: lenient(z.string()),
  groupKey: lenient(z.string()),
  truncatedAlerts: lenient(z.number()),
  status: lenient(z.enum(['firing', 'resolved'])),
  receiver: lenient(z.string()),
  groupLabels: lenient(kv),
  commonLabels: lenient(kv),
  commonAnnotations: lenient(kv),
  externalURL: lenient(z.string()),
});

export type WebhookAlert = z.output<typeof webhookAlertSchema>;
export type WebhookPayload = z.output<typeof webhookPayloadSchema>;

export type ParsedWebhook = { ok: true; payload: WebhookPayload } | { ok: false; error: string };

/** Validates a parsed JSON body; the error names each offending path, e.g. `alerts[0].fingerprint: …`. */
export function parseWebhookPayload(body: unknown): ParsedWebhook {
  const r = webhookPayloadSchema.safeParse(body);
  if (r.success) return { ok: true, payload: r.data };
  const shown = r.error.issues.slice(0, 5).map((i) => `${formatPath(i.path)}: ${i.message}`);
  const more = r.error.issues.length - shown.length;
  return { ok: false, error: `not an Alertmanager webhook payload: ${shown.join('; ')}${more > 0 ? `; and ${more} more` : ''}` };
}

function formatPath(path: readonly PropertyKey[]): string {
  if (path.length === 0) return 'body';
  let out = '';
  for (const p of path) out += typeof p === 'number' ? `[${p}]` : `${out === '' ? '' : '.'}${String(p)}`;
  return out;
}
