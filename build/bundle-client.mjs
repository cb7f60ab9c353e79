// Bundles the built client (dist/client/index.js and what it imports from dist/) into one module,
// dist/client/bundle/index.js, the file package.json `exports` gives for `zero-plane-exporter/client`.
// Why: at import Node reads, resolves and compiles every module file one by one, and that is most of an
// import's cost (~1 ms a file on a loaded machine; 30 files were ~35 ms); one file is a few. The
// in-process pipeline stays a separate chunk, loaded only by `to: 'in-process'` (client/lazy-in-process.ts),
// sharing the entry's modules (the metric family classes are one set, so `instanceof` holds). Packages
// (zod, prom-client, @datadog/sketches-js…) are not bundled: they stay dependencies, loaded by name.
// Run by `npm run build` after tsc; bench/client-import.mjs measures the result.
import { rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { build } from 'rolldown';

const dist = fileURLToPath(new URL('../dist/', import.meta.url));
const out = `${dist}client/bundle`;
await rm(out, { recursive: true, force: true });
await build({
  input: `${dist}client/index.js`,
  platform: 'node',
  // Bare specifiers (packages and node: builtins) stay imports; only dist/'s own files are bundled.
  external: (id) => !id.startsWith('.') && !id.startsWith('/'),
  logLevel: 'warn',
  output: { dir: out, format: 'esm', entryFileNames: 'index.js', chunkFileNames: 'chunk-[name].js', sourcemap: true },
});
