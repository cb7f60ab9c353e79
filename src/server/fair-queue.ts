// Logins waiting for the bcrypt thread, served fairly: round robin over network prefixes (/24 for IPv4,
// /64 for IPv6), and within a prefix over addresses, so 60 addresses of one network sending wrong
// passwords take one turn in two when one other client is waiting, not 60 in 61. Two lanes: logins from
// addresses with no recent failure go first, so a scraper whose remembered login was lost (an exporter
// restart) is checked next, however many wrong passwords are waiting; each lane has its own thread.
import { isIPv4, isIPv6 } from 'node:net';

export type Lane = 'clean' | 'failing';

export class FairQueue<T> {
  /** Lane → prefix → address → items; Map order is the round robin (a served key goes to the back). */
  private readonly lanes: Record<Lane, Map<string, Map<string, T[]>>> = { clean: new Map(), failing: new Map() };
  private readonly perPrefix = new Map<string, number>();
  private total = 0;
  private readonly laneSize: Record<Lane, number> = { clean: 0, failing: 0 };

  get size(): number {
    return this.total;
  }

  /** Items waiting in `lane`. */
  sizeOf(lane: Lane): number {
    return this.laneSize[lane];
  }

  /** Items waiting from `prefix`, in both lanes. */
  waitingFrom(prefix: string): number {
    return this.perPrefix.get(prefix) ?? 0;
  }

  push(lane: Lane, prefix: string, address: string, item: T): void {
    const prefixes = this.lanes[lane];
    let addresses = prefixes.get(prefix);
    if (addresses === undefined) prefixes.set(prefix, (addresses = new Map()));
    let items = addresses.get(address);
    if (items === undefined) addresses.set(address, (items = []));
    items.push(item);
    this.perPrefix.set(prefix, (this.perPrefix.get(prefix) ?? 0) + 1);
    this.total++;
    this.laneSize[lane]++;
  }

  /**
   * Moves what `prefix` has waiting in the clean lane to the back of the failing lane (its first login
   * failed): a flood's first logins, queued while its network had no failure, must not stay ahead of a
   * right password in the clean lane.
   */
  demote(prefix: string): void {
    const addresses = this.lanes.clean.get(prefix);
    if (addresses === undefined) return;
    this.lanes.clean.delete(prefix);
    let moved = 0;
    const target = this.lanes.failing.get(prefix) ?? new Map<string, T[]>();
    for (const [address, items] of addresses) {
      target.set(address, [...(target.get(address) ?? []), ...items]);
      moved += items.length;
    }
    this.lanes.failing.set(prefix, target);
    this.laneSize.clean -= moved;
    this.laneSize.failing += moved;
  }

  /** Drops every item (at shutdown). */
  clear(): void {
    this.lanes.clean.clear();
    this.lanes.failing.clear();
    this.perPrefix.clear();
    this.total = 0;
    this.laneSize.clean = 0;
    this.laneSize.failing = 0;
  }

  /** The next item of `lane`: round robin by prefix, then address. */
  shift(lane: Lane): T | undefined {
    {
      const prefixes = this.lanes[lane];
      const first = prefixes.entries().next();
      if (first.done === true) return undefined;
      const [prefix, addresses] = first.value;
      const [address, items] = addresses.entries().next().value as [string, T[]];
      const item = items.shift() as T;
      addresses.delete(address);
      if (items.length > 0) addresses.set(address, items);
      prefixes.delete(prefix);
      if (addresses.size > 0) prefixes.set(prefix, addresses);
      const left = (this.perPrefix.get(prefix) ?? 1) - 1;
      if (left > 0) this.perPrefix.set(prefix, left);
      else this.perPrefix.delete(prefix);
      this.total--;
      this.laneSize[lane]--;
      return item;
    }
  }
}

/** The network an address belongs to for fairness: its /24 (IPv4, IPv4-mapped IPv6 included) or /64 (IPv6). */
export function networkPrefix(address: string): string {
  const v4 = address.startsWith('::ffff:') && isIPv4(address.slice(7)) ? address.slice(7) : address;
  if (isIPv4(v4)) return `${v4.slice(0, v4.lastIndexOf('.'))}.0/24`;
  if (!isIPv6(address)) return address;
  const [head = '', tail = ''] = address.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = address.includes('::') ? (tail === '' ? [] : tail.split(':')) : [];
  const groups = address.includes('::') ? [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right] : left;
  return `${groups
    .slice(0, 4)
    .map((g) => g.toLowerCase().replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}
