#!/usr/bin/env node
// PROTOTYPE, not the product: `report` as it runs when the CLI imports only what `report` needs. Today
// dist/cli/main.js imports every command up front (express, the simulator, the dashboards SDK, …), which
// costs ~0.3–0.4 s and ~20 MiB RSS before the first line is read. Same config, same code path from
// runReport on: only the start-up differs.
//   node bench/prototypes/report-lazy.mjs FILE
const dist = new URL('../../dist/', import.meta.url);
const [{ runReport }, { loadConfig }] = await Promise.all([import(new URL('cli/report-command.js', dist)), import(new URL('config/load.js', dist))]);
const file = process.argv[2];
if (file === undefined) throw new Error('usage: report-lazy.mjs FILE');
process.exitCode = await runReport(loadConfig(undefined), { files: [file], format: 'json', failOn: undefined }, (text) => process.stdout.write(text));
