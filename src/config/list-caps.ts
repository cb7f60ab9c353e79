// The most items each list of a config may hold. Every list is bounded, so a typo or a generated file
// cannot make one key cost the exporter memory or a scrape its size: 20,000 histogram buckets were
// accepted and 100 lines then made a 101 MB scrape. Each cap is far above any real use; the reasons
// are in docs/config-limits.md.
// zod's types only: the client reads LIST_CAPS without loading zod (client/client-config.ts).
import type { z } from 'zod';

export const LIST_CAPS = {
  // --config.file
  'input.fields.latency': 8,
  'input.absentValues': 32,
  'signals.stableCohorts': 64,
  /** Each bound is a series per label set of zero_plane_request_duration_seconds: 64 × 1,000 label sets = 64,000 lines. */
  'metrics.histogramBuckets': 64,
  'sources.files': 1024,
  'web.listenAddress': 16,
  'pack.aggregationLabels': 16,
  'slos.page': 8,
  'slos.ticket': 8,
  'deploy.kubernetes.labels': 32,
  'deploy.systemd.logDirectories': 32,
  'deploy.systemd.supplementaryGroups': 32,
  // --web.config.file
  basic_auth_users: 1024,
  'tls_server_config.client_allowed_sans': 256,
  'tls_server_config.cipher_suites': 32,
  'tls_server_config.curve_preferences': 8,
} as const;

export type CappedList = keyof typeof LIST_CAPS;

/** The message of a list over its cap. */
export function overCap(key: CappedList): string {
  return `at most ${LIST_CAPS[key]} items (every list in a config is capped: docs/config-limits.md)`;
}

/** An array of `item` holding at most the cap of `key`. */
export function cappedArray<T extends z.ZodType>(item: T, key: CappedList): z.ZodArray<T> {
  return item.array().max(LIST_CAPS[key], overCap(key));
}

/** Whether a record (a YAML map) is within the cap of `key`; for `.refine`. */
export function withinCap(key: CappedList): [(value: object) => boolean, { message: string }] {
  return [(value) => Object.keys(value).length <= LIST_CAPS[key], { message: overCap(key) }];
}
