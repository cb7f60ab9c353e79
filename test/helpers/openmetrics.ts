// Debian's python3-prometheus-client OpenMetrics parser (/usr/bin/python3: the PATH python3 may be another
// install without it), and the Accept header Prometheus scrapes with.
import { spawnSync } from 'node:child_process';
import { requireBinary } from './binaries.js';

/** Prometheus 2.42's scrape Accept header. */
export const PROMETHEUS_ACCEPT = 'application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1';

/** Runs Debian's OpenMetrics parser on `text`: the families it read (name, type, unit, samples), or its error. */
export function pythonOpenMetrics(text: string): { ok: true; families: { name: string; type: string; unit: string; samples: number }[] } | { ok: false; error: string } {
  const python = requireBinary('/usr/bin/python3');
  const script = [
    'import json, sys',
    'from prometheus_client.openmetrics.parser import text_string_to_metric_families',
    'try:',
    '    fams = [{"name": f.name, "type": f.type, "unit": f.unit, "samples": len(f.samples)} for f in text_string_to_metric_families(sys.stdin.read())]',
    '    print(json.dumps({"ok": True, "families": fams}))',
    'except Exception as e:',
    '    print(json.dumps({"ok": False, "error": str(e)}))',
  ].join('\n');
  const r = spawnSync(python, ['-c', script], { input: text, encoding: 'utf8', timeout: 60_000, maxBuffer: 64 * 1024 * 1024 });
  if (r.status !== 0) throw new Error(`python3 failed: ${r.stderr}`);
  return JSON.parse(r.stdout) as ReturnType<typeof pythonOpenMetrics>;
}
