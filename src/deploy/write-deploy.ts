// Renders deploy/ (Kubernetes manifests, systemd units) as files. `generate` writes them; a test keeps
// the committed copies equal to this output.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Config } from '../config/schema.js';
import { renderKubernetes } from './kubernetes.js';
import { renderSystemd } from './systemd.js';

/** Relative path under deploy/ → file content. */
export function renderDeploy(config: Config): Map<string, string> {
  const files = new Map<string, string>();
  for (const [file, content] of renderKubernetes(config)) files.set(`kubernetes/${file}`, content);
  for (const [file, content] of renderSystemd(config)) files.set(`systemd/${file}`, content);
  return files;
}

export function writeDeploy(config: Config, outDir: string): string[] {
  const written: string[] = [];
  for (const [file, content] of renderDeploy(config)) {
    const path = join(outDir, file);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, content);
    written.push(path);
  }
  return written;
}
