// The log a user already has: Debian's nginx and HAProxy with their own default text formats (nginx's
// `combined`, HAProxy's `option httplog`) in front of the simulator. `report` on such a log cannot read
// it, and must say what it is and which section of docs/gateways.md turns it into JSON, not only "invalid_json".
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { textLogFormat } from '../../../src/record/text-log-format.js';
import { startSimulator } from '../../../src/simulate/simulator.js';
import { BIN, waitFor } from '../../helpers/cli-process.js';
import { startHaproxy, startNginx } from '../../helpers/gateways.js';
import { tempDir } from '../../helpers/temp-dir.js';

const REQUESTS = 5;

async function reportOn(file: string): Promise<{ code: number; stderr: string }> {
  try {
    const { stderr } = await promisify(execFile)(process.execPath, [BIN, 'report', file]);
    return { code: 0, stderr };
  } catch (err) {
    const e = err as { code?: number; stderr?: string };
    return { code: e.code ?? -1, stderr: e.stderr ?? '' };
  }
}

describe.each([
  ['nginx', (dir: string, up: string) => startNginx(dir, up, 'access_log /var/log/nginx/llm.jsonl;'), 'common/combined text format', 'docs/gateways.md#nginx-nginx-json'],
  ['haproxy', (dir: string, up: string) => startHaproxy(dir, up, 'log stdout format raw local0\noption httplog'), "HAProxy's text httplog format", 'docs/gateways.md#haproxy-haproxy-json'],
] as const)('%s with its default text log', (name, start, format, section) => {
  it(`report says the lines are ${format} and points at ${section}`, async () => {
    const sim = await startSimulator({ mode: 'strict', seed: 3 });
    const gateway = await start(tempDir(`zp-text-${name}-`), new URL(sim.url).host).catch(async (err: unknown) => {
      await sim.close();
      throw err;
    });
    try {
      for (let i = 0; i < REQUESTS; i++) {
        const res = await fetch(`${gateway.url}/v1/messages`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{"model":"claude-sonnet-4","max_tokens":8,"messages":[]}',
          signal: AbortSignal.timeout(5_000),
        });
        await res.arrayBuffer();
      }
      const lines = () =>
        existsSync(gateway.logPath)
          ? readFileSync(gateway.logPath, 'utf8')
              .split('\n')
              .filter((l) => l !== '')
          : [];
      await waitFor(() => (lines().length >= REQUESTS ? true : undefined), 10_000, `${REQUESTS} lines in ${gateway.logPath}`);
      const r = await reportOn(gateway.logPath);
      expect(r.code).toBe(1);
      // Every line skipped (HAProxy also logs a line of its own when it starts).
      const m = /: (\d+) of the first (\d+) lines skipped \(invalid_json (\d+)\); no preset reads them; they are /.exec(r.stderr);
      expect(m, r.stderr).not.toBeNull();
      expect(new Set(m?.slice(1)).size).toBe(1);
      expect(Number(m?.[1])).toBeGreaterThanOrEqual(REQUESTS);
      expect(r.stderr).toContain(format);
      expect(r.stderr).toContain(section);
    } finally {
      await gateway.stop();
      await sim.close();
    }
  }, 60_000);
});

describe('textLogFormat', () => {
  it("knows Envoy's default format, and names nothing for JSON, garbage or a mix", () => {
    const envoy = '[2026-12-01T10:00:00.123Z] "POST /v1/messages HTTP/1.1" 200 - 57 512 183 182 "-" "curl/8.0" "6b5c…" "api.example" "10.0.0.7:8080"';
    expect(textLogFormat([envoy, envoy])?.name).toBe("Envoy's default text format");
    expect(textLogFormat(['{"ts":"2026-12-01T10:00:00Z"}', 'not a log line at all'])).toBeUndefined();
    const combined = '10.0.0.1 - - [01/Dec/2026:10:00:00 +0000] "POST /v1/messages HTTP/1.1" 200 512 "-" "curl/8.0"';
    // Most of the lines must be in the format: one in three is not enough.
    expect(textLogFormat([combined, 'garbage', 'more garbage'])).toBeUndefined();
    expect(textLogFormat([combined, combined, 'garbage'])?.name).toContain('common/combined');
    expect(textLogFormat([])).toBeUndefined();
  });
});
