// The bcrypt queue's order (fair-queue.ts): round robin by network, then address; two lanes; a network
// whose first login failed has its waiting checks moved out of the clean lane.
import { describe, expect, it } from 'vitest';
import { FairQueue, networkPrefix } from '../../../src/server/fair-queue.js';

const drain = (q: FairQueue<string>, lane: 'clean' | 'failing') => {
  const out: string[] = [];
  for (let item = q.shift(lane); item !== undefined; item = q.shift(lane)) out.push(item);
  return out;
};

describe('FairQueue', () => {
  it('serves networks in turn, then addresses within a network, whatever one network queued', () => {
    const q = new FairQueue<string>();
    for (let i = 0; i < 4; i++) q.push('failing', '10.0.0.0/24', `10.0.0.${i % 2}`, `flood${i}`);
    q.push('failing', '10.0.1.0/24', '10.0.1.1', 'other');
    expect(q.size).toBe(5);
    expect(q.waitingFrom('10.0.0.0/24')).toBe(4);
    expect(drain(q, 'failing')).toEqual(['flood0', 'other', 'flood1', 'flood2', 'flood3']);
    expect(q.size).toBe(0);
  });

  it('keeps the lanes apart and counts each', () => {
    const q = new FairQueue<string>();
    q.push('clean', 'a', 'a1', 'c1');
    q.push('failing', 'b', 'b1', 'f1');
    q.push('failing', 'b', 'b1', 'f2');
    expect([q.sizeOf('clean'), q.sizeOf('failing'), q.size]).toEqual([1, 2, 3]);
    expect(q.shift('clean')).toBe('c1');
    expect(q.shift('clean')).toBeUndefined();
    expect(q.sizeOf('failing')).toBe(2);
  });

  it('demote moves a network out of the clean lane, behind what the failing lane holds, and leaves other networks', () => {
    const q = new FairQueue<string>();
    q.push('clean', 'flood', 'x1', 'early1');
    q.push('clean', 'flood', 'x2', 'early2');
    q.push('clean', 'scraper', 's1', 'right');
    q.push('failing', 'flood', 'x1', 'late');
    q.demote('flood');
    q.demote('nobody');
    expect([q.sizeOf('clean'), q.sizeOf('failing'), q.size, q.waitingFrom('flood')]).toEqual([1, 3, 4, 3]);
    expect(drain(q, 'clean')).toEqual(['right']);
    expect(drain(q, 'failing')).toEqual(['late', 'early2', 'early1']);
  });

  it('networkPrefix: /24 for IPv4 (mapped too), /64 for IPv6', () => {
    expect(networkPrefix('127.0.0.10')).toBe('127.0.0.0/24');
    expect(networkPrefix('::ffff:192.168.1.7')).toBe('192.168.1.0/24');
    expect(networkPrefix('2001:db8:0:1::5')).toBe('2001:db8:0:1::/64');
    expect(networkPrefix('::1')).toBe('0:0:0:0::/64');
  });
});
