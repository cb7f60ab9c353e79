#!/usr/bin/env node
// The share of a file's lines that the byte-level reader declines, so that they are decoded and go through
// JSON.parse: the "fell back" column of the bench. It runs the built parser (dist/) of the given preset
// over the file's lines, exactly as `report` hands them over (LineSplitter, bytes), and counts.
//   node bench/fallback-share.mjs FILE PRESET      prints {"lines":N,"fallback":M,"share":M/N}
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const dist = (p) => import(pathToFileURL(join(ROOT, 'dist', p)).href);

export async function fallbackShare(file, preset) {
  const { defaultConfig } = await dist('config/schema.js');
  const { recordParserFor } = await dist('pipeline.js');
  const { SignalClassifier } = await dist('signals/classify.js');
  const { LineSplitter } = await dist('source/line-splitter.js');
  const config = defaultConfig();
  const parser = recordParserFor(config, new SignalClassifier(config.headers), preset);
  let lines = 0;
  let fallback = 0;
  const splitter = new LineSplitter(
    config.input.maxLineBytes,
    {
      line: () => {
        throw new Error('the splitter must hand over bytes');
      },
      lineBytes: (buf, start, end) => {
        lines++;
        if (parser.parseBytes(buf, start, end) === undefined) fallback++;
      },
      oversize: () => lines++,
    },
    file,
  );
  const data = readFileSync(file);
  for (let at = 0; at < data.length; at += 1 << 20) splitter.push(data.subarray(at, Math.min(data.length, at + (1 << 20))));
  splitter.flush();
  return { lines, fallback, share: lines === 0 ? 0 : fallback / lines };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [file, preset] = process.argv.slice(2);
  if (preset === undefined) throw new Error('usage: node bench/fallback-share.mjs FILE PRESET');
  process.stdout.write(`${JSON.stringify(await fallbackShare(file, preset))}\n`);
}
