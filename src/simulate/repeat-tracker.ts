// Counts identical request bodies in a row (arrival order, across all clients), for the cache rule.
import { createHash } from 'node:crypto';

export class RepeatTracker {
  private last: string | undefined;
  private count = 0;

  /** Records one body and returns how many times in a row it has now arrived (1 = differs from the last). */
  see(body: string): number {
    const digest = createHash('sha256').update(body).digest('base64');
    if (digest === this.last) this.count++;
    else {
      this.last = digest;
      this.count = 1;
    }
    return this.count;
  }
}
