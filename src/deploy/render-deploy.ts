// Renders deploy/ (Kubernetes manifests, systemd units) as files. `generate` writes them; a test keeps
// the committed copies equal to this output.
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
