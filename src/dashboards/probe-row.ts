// The overview's probe row: what the synthetic probe (docs/probe.md) saw per target, and the share the
// ZeroPlaneProbeFallback alert compares. The probe job is the user's own, not pack.selector's: its series
// are read by name through the job and instance variables, so with All (the default) every target shows.
import type { Config } from '../config/schema.js';
import { formatDuration } from '../config/duration.js';
import { PROBE_DURATION, PROBE_FALLBACK, PROBE_INFO, PROBE_LAYER_HIT } from '../metrics/probe-names.js';
import { by, type Grouping } from '../pack/grouping.js';
import { flagStat, healthyBelow, secondsPanel, sharePanel, type Section } from './panels.js';
import { recorded } from './queries.js';
import { pct } from './shared.js';

export function probeSection(config: Config, g: Grouping): Section {
  const ratio = config.probe.fallbackAlert.ratio;
  const w = formatDuration(config.pack.rateWindow);
  const legend = `${g.legend} {{instance}}`;
  const via = 'From the probe job scraping /probe (docs/probe.md), through the job and instance variables: keep them at All to see every probed target.';
  return {
    title: 'Synthetic probes (per target)',
    panels: [
      flagStat({
        title: 'Last probe served by Zero-Plane',
        description: `Whether the last probe of each target (one max_tokens 1 request with the exact opt-in header) was answered by the Zero-Plane layer. ${via}`,
        queries: [{ expr: `min ${by(g, 'instance')} (${recorded(g, PROBE_LAYER_HIT)})`, legend }],
        zero: { text: 'FALLBACK', color: 'red' },
        one: { text: 'Zero-Plane', color: 'green' },
        noValue: 'No probes',
        w: 6,
        h: 8,
      }),
      sharePanel({
        title: `Probes answered, not by Zero-Plane (${w})`,
        description: `Share of each target's probes over ${w} that got an answer not served by Zero-Plane: the arithmetic of the rule ZeroPlaneProbeFallback reads, compared with ${pct(ratio)} (dashed). ${via}`,
        // From the raw series, as the rule computes it: a panel reads no recording rule (it could not filter by instance).
        queries: [{ expr: `avg ${by(g, 'instance')} (avg_over_time(${recorded(g, PROBE_FALLBACK)}[${w}]))`, legend }],
        max: 1,
        steps: healthyBelow(ratio),
        noValue: 'No probes',
        w: 9,
      }),
      secondsPanel({
        title: 'Probe duration',
        description: `How long each probe took, answer included (probe_duration_seconds of this exporter's probe). ${via}`,
        queries: [{ expr: `${recorded(g, PROBE_DURATION)}\nand on (${g.by}, instance)\n${recorded(g, PROBE_INFO)}`, legend }],
        noValue: 'No probes',
        w: 9,
      }),
    ],
  };
}
