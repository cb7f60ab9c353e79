// The most repeated prompts as gauges, recomputed at each scrape from the Space-Saving summary
// (windows/repeated-prompts.ts). The hash sits only on the info series, one per rank: the value series are
// labelled by rank alone, so their number never changes, and at most repeats.top hashes are ever exposed.
import type { RepeatedPrompts } from '../windows/repeated-prompts.js';
import { GaugeFamily } from './families.js';

export class RepeatGauges {
  readonly info = new GaugeFamily(
    'zero_plane_repeated_prompt_info',
    'The prompt hash at each rank of the most repeated prompts since the exporter started (1 per rank, at most repeats.top); join on rank.',
    ['rank', 'prompt_hash'],
  );
  readonly requests = new GaugeFamily(
    'zero_plane_repeated_prompt_requests',
    'Requests with the prompt hash at this rank since the exporter started (Space-Saving: an upper bound, exact while fewer than repeats.k hashes were seen).',
    ['rank'],
  );
  readonly cachedRatio = new GaugeFamily(
    'zero_plane_repeated_prompt_cached_ratio',
    'Share of the answers to the prompt at this rank that came back cached (x-anthropic-cached), over the requests since its hash was kept.',
    ['rank'],
  );

  constructor(
    private readonly repeats: RepeatedPrompts,
    private readonly top: number,
  ) {}

  /** Recomputes every series; a rank with no hash (fewer seen than `top`) has none. */
  refresh(): void {
    for (const g of this.families()) g.clear();
    for (const row of this.repeats.rows(this.top)) {
      const rank = String(row.rank);
      this.info.set([rank, row.hash], 1);
      this.requests.set([rank], row.count);
      this.cachedRatio.set([rank], row.cachedShare);
    }
  }

  families(): GaugeFamily[] {
    return [this.info, this.requests, this.cachedRatio];
  }
}
