// The shapes of the client's options as an application writes them, declared by hand and importing
// nothing: the client's declarations reach no schema library and none of the exporter's config types
// (test/live/client/client-entry-point.test.ts), and client-config.ts / instrument-options.ts check them.

/** Batches to a running exporter's POST /api/v1/ingest. */
export interface IngestOptions {
  /** The exporter's base URL (http://host:9185), or the full ingest URL. */
  url: string;
  bearerToken?: string;
  headers?: Record<string, string>;
  /** Default 500. */
  batchRecords?: number;
  /** Default 1 s. */
  flushInterval?: number | string;
  /** Default 10000. */
  maxPendingRecords?: number;
  /** Default 5. */
  maxAttempts?: number;
  /** Per attempt; default 10 s. */
  timeout?: number | string;
}

/** Appends to a log file `serve` follows. */
export interface LogFileOptions {
  logFile: string;
  /** Default 10000. */
  maxPendingRecords?: number;
}

/** The exporter's config as its YAML gives it (same keys, same defaults), as far as the client reads it. */
export interface ConfigInput {
  headers?: {
    layerId?: { name?: string; match?: string };
    delayProfile?: { name?: string; degradedMember?: string; warmupMember?: string; modeMember?: string };
    cached?: { name?: string; value?: string };
    downgradeReason?: { name?: string };
    optIn?: { name?: string; value?: string };
  };
  signals?: {
    baselineSeconds?: number;
    tolerance?: number;
    fastTargetSeconds?: number;
    hitRateTarget?: number;
    warmupEfficiencyTarget?: number;
    warmupEfficiencyBaseline?: number;
    parseErrorRatioMax?: number;
    stableCohorts?: string[];
  };
  /** Durations as the YAML writes them: "5m", "10s". */
  window?: { duration?: string; slot?: string; quantileRelativeAccuracy?: number };
  metrics?: { histogramBuckets?: number[]; labelValueLimit?: number; downgradeReasonLimit?: number; labelValueMaxBytes?: number; maxSeriesPerFamily?: number };
  /** The exporter's other sections: accepted (one parsed zero-plane.yml serves both) and not read by the client. */
  input?: unknown;
  sources?: unknown;
  web?: unknown;
  gate?: unknown;
  ingest?: unknown;
  pack?: unknown;
  alerts?: unknown;
  slos?: unknown;
  history?: unknown;
  dashboards?: unknown;
  alertmanager?: unknown;
  checkpoint?: unknown;
  deploy?: unknown;
}
