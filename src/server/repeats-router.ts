// GET /api/v1/repeats: the most repeated prompts (by hash) as JSON, for a BI tool or a FAQ review. The
// same numbers as serve's zero_plane_repeated_prompt_* gauges and `report`'s `repeats` section; behind the
// same guard as every endpoint (basic auth in --web.config.file), like /api/v1/signals and /api/v1/gate.
import express from 'express';
import type { RepeatedPrompts, RepeatsSummary } from '../windows/repeated-prompts.js';

export const REPEATS_PATH = '/api/v1/repeats';

export interface RepeatsResponse extends RepeatsSummary {
  /** RFC 3339: when this answer was made, and since when the exporter has counted (its start). */
  now: string;
  since: string;
}

export interface RepeatsRouterOptions {
  repeats: RepeatedPrompts;
  /** repeats.top. */
  top: number;
  /** Epoch ms the counting began. */
  sinceMs: number;
  clock?: () => number;
}

export function repeatsRouter(opts: RepeatsRouterOptions): express.Router {
  const clock = opts.clock ?? Date.now;
  const router = express.Router();
  router.get(REPEATS_PATH, (_req, res) => {
    const body: RepeatsResponse = { now: new Date(clock()).toISOString(), since: new Date(opts.sinceMs).toISOString(), ...opts.repeats.summary(opts.top) };
    res.set('Cache-Control', 'no-store').json(body);
  });
  return router;
}
