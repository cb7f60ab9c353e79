import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { StdinFollower } from '../../../src/source/file-follower.js';
import type { LineSink, SourceEvents } from '../../../src/source/line-sink.js';

class Recorder implements LineSink, SourceEvents {
  lines: string[] = [];
  sources = new Set<string>();
  errors: string[] = [];
  line(text: string, source: string): void {
    this.lines.push(text);
    this.sources.add(source);
  }
  oversize(): void {}
  error(_source: string, reason: string): void {
    this.errors.push(reason);
  }
}

describe('StdinFollower', () => {
  it('delivers lines as they arrive and flushes the last one at the end', async () => {
    const input = new PassThrough();
    const rec = new Recorder();
    const f = new StdinFollower(1024, rec, rec, input);
    f.start();
    input.write('a\nb');
    await new Promise((r) => setImmediate(r));
    expect(rec.lines).toEqual(['a']);
    input.end('c');
    await f.done;
    expect(rec.lines).toEqual(['a', 'bc']);
    expect([...rec.sources]).toEqual(['stdin']);
  });

  it('reports a stream error and settles', async () => {
    const input = new PassThrough();
    const rec = new Recorder();
    const f = new StdinFollower(1024, rec, rec, input);
    f.start();
    input.destroy(new Error('boom'));
    await f.done;
    expect(rec.errors).toEqual(['read_error']);
  });

  it('stop() settles without emitting the partial line', async () => {
    const input = new PassThrough();
    const rec = new Recorder();
    const f = new StdinFollower(1024, rec, rec, input);
    f.start();
    input.write('x\npartial');
    await new Promise((r) => setImmediate(r));
    f.stop();
    await f.done;
    input.end('\n');
    expect(rec.lines).toEqual(['x']);
  });
});
