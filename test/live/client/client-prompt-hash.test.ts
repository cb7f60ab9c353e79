// zero-plane-exporter/client with `promptHash`: each call's line carries the normalized prompt's hash, the
// request carries it as a header a gateway can log (`header: true`: x-prompt-hash), the variants of one
// question warn once, and `report` on the client's own log file counts the repeats with their cached answers.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { instrumentFetch } from '../../../src/client/index.js';
import { runCli } from '../../helpers/cli-process.js';
import { tempDir } from '../../helpers/temp-dir.js';

const answer = JSON.stringify({ id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-x', content: [], stop_reason: 'end_turn', usage: { input_tokens: 1, output_tokens: 2 } });

describe('client promptHash', () => {
  it('hashes, sends the header, warns once about variants, and report counts the repeats', async () => {
    const dir = tempDir('zp-client-hash-');
    const log = join(dir, 'calls.log');
    const sent: (string | null)[] = [];
    // The API's side: answers cached for the second ask of a question, as a prompt cache would.
    const asked = new Set<string>();
    const api = async (_input: string | URL | Request, init?: RequestInit): Promise<Response> => {
      const h = new Headers(init?.headers);
      sent.push(h.get('x-prompt-hash'));
      const prompt = String(init?.body);
      const cached = asked.has(prompt);
      asked.add(prompt);
      return new Response(answer, { status: 200, headers: { 'content-type': 'application/json', 'x-anthropic-layer-id': 'zero-plane-v1', ...(cached ? { 'x-anthropic-cached': 'true' } : {}) } });
    };
    const warnings: string[] = [];
    const f = instrumentFetch(api, { to: { logFile: log }, promptHash: { header: true }, warn: (m) => warnings.push(m) });
    const ask = async (text: string) => {
      const res = await f('http://api.invalid/v1/messages', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'claude-x', max_tokens: 1, messages: [{ role: 'user', content: text }] }),
      });
      await res.text();
    };
    // The refund question 4 times (2 spelled with a full-width ？, one with extra spaces), shipping twice, one other.
    for (const q of ['What is the refund policy?', 'What is the refund policy?', 'What is the refund policy？', 'What is the  refund policy？', 'Where is my parcel?', 'Where is my parcel?', 'Hello'])
      await ask(q);
    await f.close();

    const lines = readFileSync(log, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { prompt_hash?: string });
    expect(lines).toHaveLength(7);
    expect(lines.map((l) => l.prompt_hash)).toEqual(sent);
    const [refund, , , , parcel, , hello] = sent;
    expect(new Set(sent.slice(0, 4))).toEqual(new Set([refund]));
    expect(refund).toMatch(/^[0-9a-f]{32}$/);
    expect(new Set([refund, parcel, hello]).size).toBe(3);
    expect(warnings.filter((w) => /differ only by character width/.test(w))).toHaveLength(1);

    const r = runCli(['report', '--format=json', log]);
    expect(r.code).toBe(0);
    // Cached: the 2nd exact refund ask, the 2nd parcel ask (the variants are new prompts to the API's cache).
    expect(JSON.parse(r.stdout).repeats).toEqual({
      requests: 7,
      cached: 2,
      cachedShare: 2 / 7,
      k: 1000,
      top: [
        { rank: 1, hash: refund, count: 4, error: 0, cached: 1, cachedShare: 0.25 },
        { rank: 2, hash: parcel, count: 2, error: 0, cached: 1, cachedShare: 0.5 },
        { rank: 3, hash: hello, count: 1, error: 0, cached: 0, cachedShare: 0 },
      ],
    });
  });

  it('is off by default: no header, no prompt_hash', async () => {
    const dir = tempDir('zp-client-hash-');
    const log = join(dir, 'calls.log');
    let header: string | null = 'unset';
    const f = instrumentFetch(
      async (_i, init) => {
        header = new Headers(init?.headers).get('x-prompt-hash');
        return new Response(answer, { status: 200, headers: { 'content-type': 'application/json' } });
      },
      { to: { logFile: log }, warn: () => undefined },
    );
    await (await f('http://api.invalid/v1/messages', { method: 'POST', body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }] }) })).text();
    await f.close();
    expect(header).toBeNull();
    expect(readFileSync(log, 'utf8')).not.toContain('prompt_hash');
  });
});
