// The opt-in guard and what instrumentFetch passes on, with the real fetch against a real loopback server
// that echoes what it received: every header form a caller may use, the value as the server reads it,
// repair changing that one header and nothing else, and the instrumentation never being why a call fails.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClientOptionsError, instrumentFetch, metricsText, OptInHeaderError } from '../../../src/client/index.js';
import { readHeader } from '../../../src/client/fetch-args.js';
import { OptInGuard, wireText } from '../../../src/client/opt-in-guard.js';
import { wireHeaderValue } from '../../../src/loadgen/mix.js';

const NAME = 'x-anthropic-experimental';
const VALID = 'zero-plane-2024';

interface Echo {
  headers: IncomingHttpHeaders;
  body: string;
}

let server: Server;
let url: string;
const received: Echo[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.setEncoding('latin1');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      received.push({ headers: req.headers, body });
      res.setHeader('x-anthropic-layer-id', req.headers[NAME] === VALID ? 'zero-plane-v1' : 'standard-v3');
      res.setHeader('content-type', 'application/json');
      res.end('{"ok":true}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}/v1/messages`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const quiet = { warn: () => undefined };
const count = (text: string, series: string) => Number(new RegExp(`^${series.replace(/[{}()[\]]/g, '\\$&')} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);

describe('reading the opt-in header', () => {
  it('finds it in every form fetch takes, case-insensitively; init.headers replace a Request’s', () => {
    const forms: [string | Request, RequestInit | undefined][] = [
      [url, { headers: new Headers({ 'X-Anthropic-Experimental': VALID }) }],
      [url, { headers: [['X-ANTHROPIC-EXPERIMENTAL', VALID]] }],
      [url, { headers: { 'x-Anthropic-experimental': VALID } }],
      [new Request(url, { headers: { [NAME]: VALID } }), undefined],
    ];
    for (const [input, init] of forms) expect(readHeader(input, init, NAME)).toBe(VALID);
    expect(readHeader(new Request(url, { headers: { [NAME]: VALID } }), { headers: {} }, NAME)).toBeUndefined();
    expect(readHeader(url, undefined, NAME)).toBeUndefined();
  });

  it('reads the value as the server will: HTTP whitespace stripped, UTF-8 bytes decoded', () => {
    expect(wireText(` ${VALID}\t`)).toBe(VALID); // fetch strips these itself: not a defect
    expect(wireText(wireHeaderValue(`\u200b${VALID}`))).toBe(`\u200b${VALID}`);
    expect(wireText(`${VALID}\u00a0`)).toBe(`${VALID}\u00a0`); // a lone 0xA0 is not UTF-8: read as it is
    expect(wireText('\u200b')).toBe('\u200b');
  });

  it('classifies with the exporter’s defect kinds', () => {
    const judge = (value: string) => new OptInGuard({ name: NAME, value: VALID }, 'report').judge(url, { headers: { [NAME]: value } }).verdict.optIn;
    expect(judge(VALID)).toEqual({ state: 'valid', defect: undefined });
    expect(judge(wireHeaderValue(`zero-plane\u200d-2024`)).defect).toBe('invisible_char');
    expect(judge(`\u00a0${VALID}`).defect).toBe('whitespace');
    expect(judge('ZERO-PLANE-2024').defect).toBe('case');
    expect(judge('zero-plane-2025').defect).toBe('value');
  });
});

describe('instrumentFetch passes the call through', () => {
  it('report: the request arrives byte for byte as given, and the response is fetch’s own', async () => {
    received.length = 0;
    const zp = instrumentFetch(fetch, quiet);
    const body = JSON.stringify({ model: 'claude-haiku', messages: [{ role: 'user', content: 'hé \u200b' }] });
    const res = await zp(url, { method: 'POST', headers: { [NAME]: `${VALID}\u00a0`, 'x-other': 'kept', 'content-type': 'application/json' }, body });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true });
    expect(received[0]?.headers[NAME]).toBe(`${VALID}\u00a0`);
    expect(received[0]?.headers['x-other']).toBe('kept');
    expect(Buffer.from(received[0]?.body ?? '', 'latin1').toString('utf8')).toBe(body);
    expect(zp.signals()?.window).toMatchObject({ requests: 1, hits: 0 });
  });

  it('repair: only the opt-in header changes, also for a value fetch itself would refuse', async () => {
    received.length = 0;
    const zp = instrumentFetch(fetch, { ...quiet, optIn: 'repair' });
    const headers = { [NAME]: `\u200b${VALID}`, 'x-other': 'kept' };
    // Without the guard, fetch refuses the raw U+200B (header values are byte strings).
    await expect(fetch(url, { headers })).rejects.toThrow(TypeError);
    const res = await zp(url, { method: 'POST', headers, body: 'x' });
    expect(res.headers.get('x-anthropic-layer-id')).toBe('zero-plane-v1');
    expect(received[0]?.headers[NAME]).toBe(VALID);
    expect(received[0]?.headers['x-other']).toBe('kept');
    expect(received[0]?.body).toBe('x');
    // The call's line is written once its body is read through (response-observer.ts).
    await res.text();
    expect(headers[NAME]).toBe(`\u200b${VALID}`); // the caller's object is untouched
    expect(count(metricsText([zp]), 'zero_plane_client_opt_in_guard_total{action="repaired",defect="invisible_char"}')).toBe(1);
    expect(zp.signals()?.window).toMatchObject({ requests: 1, hits: 1 });
  });

  it('a call that fails in fetch fails with fetch’s own error, counted; it is not a request', async () => {
    const zp = instrumentFetch(fetch, quiet);
    const closed = 'http://127.0.0.1:1/'; // nothing listens on port 1
    await expect(zp(closed)).rejects.toThrow(/fetch failed/);
    await expect(zp(url, { signal: AbortSignal.abort() })).rejects.toMatchObject({ name: 'AbortError' });
    // report mode sends a raw U+200B as given: fetch refuses it, and that is fetch's error, not ours.
    await expect(zp(url, { headers: { [NAME]: `\u200b${VALID}` } })).rejects.toThrow(TypeError);
    const text = metricsText([zp]);
    expect(count(text, 'zero_plane_client_request_failures_total{reason="error"}')).toBe(2);
    expect(count(text, 'zero_plane_client_request_failures_total{reason="aborted"}')).toBe(1);
    expect(zp.signals()?.window.requests).toBe(0);
  });

  it('a warn callback that throws is never what fails a call', async () => {
    const warn = () => {
      throw new Error('broken logger');
    };
    const reject = instrumentFetch(fetch, { optIn: 'reject', warn });
    await expect(reject(url, { headers: { [NAME]: 'Zero-Plane-2024' } })).rejects.toBeInstanceOf(OptInHeaderError);
    const report = instrumentFetch(fetch, { warn });
    expect((await report(url, { headers: { [NAME]: 'Zero-Plane-2024' } })).status).toBe(200);
  });
});

describe('options', () => {
  it('a wrong option is a clear error at start-up, naming it', () => {
    expect(() => instrumentFetch(fetch, { optIn: 'fix' as 'repair' })).toThrow(ClientOptionsError);
    expect(() => instrumentFetch(fetch, { optIn: 'fix' as 'repair' })).toThrow(/^instrumentFetch: optIn: /);
    expect(() => instrumentFetch(fetch, { to: { ingest: { url: 'ftp://x' } } })).toThrow(/to/);
    expect(() => instrumentFetch(fetch, { config: { signals: { tolerance: 'wide' as unknown as number } } })).toThrow(/instrumentFetch: config\.signals\.tolerance: /);
    expect(() => instrumentFetch('fetch' as unknown as typeof fetch)).toThrow(TypeError);
  });

  it('the config’s header names and opt-in value are the ones the guard checks', async () => {
    received.length = 0;
    const zp = instrumentFetch(fetch, { ...quiet, optIn: 'reject', config: { headers: { optIn: { name: 'x-zp-opt-in', value: 'yes' } } } });
    await expect(zp(url, { headers: { 'x-zp-opt-in': 'Yes' } })).rejects.toMatchObject({ header: 'x-zp-opt-in', defect: 'case', expected: 'yes' });
    expect((await zp(url, { headers: { 'x-zp-opt-in': 'yes', [NAME]: 'anything' } })).status).toBe(200);
    expect(received).toHaveLength(1);
  });
});
