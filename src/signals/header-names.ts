// The response headers the signals read (docs/contract.md §2), lower-cased: what a record parser must
// extract and what the client writes into each line. Its own module, without the classifier's
// structured-field parser, so the client can name them without loading it.
import type { Config } from '../config/schema.js';

export function responseHeaderNames(headers: Config['headers']): string[] {
  return [headers.layerId.name, headers.delayProfile.name, headers.cached.name, headers.downgradeReason.name].map((n) => n.toLowerCase());
}
