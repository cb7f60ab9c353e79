// The generated Kubernetes set fills the gate's scope from the Pod: namespace from the downward API, the
// config's other scope labels (cluster) from a kustomize-generated ConfigMap an overlay per cluster
// replaces. Built with `kubectl kustomize`, the exporter container's args are expanded from its env as the
// kubelet does, and the real `serve` runs them: its gate says the scope the Pod gave it.
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { parseConfig } from '../../../src/config/load.js';
import { renderDeploy } from '../../../src/deploy/render-deploy.js';
import { requireBinary } from '../../helpers/binaries.js';
import { startCommand } from '../../helpers/cli-process.js';
import { gateOf } from '../../helpers/gate-replicas.js';
import { tempDir } from '../../helpers/temp-dir.js';

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { fieldRef?: { fieldPath: string }; configMapKeyRef?: { name: string; key: string } };
}
interface Manifest {
  kind: string;
  metadata: { name: string; namespace?: string };
  data?: Record<string, string>;
  spec?: { template: { spec: { containers: { name: string; args?: string[]; env?: EnvVar[] }[] } } };
}

describe('the gate scope in the generated Kubernetes set', () => {
  it('comes from the downward API and a per-cluster ConfigMap, and reaches the running gate', async () => {
    const kubectl = requireBinary('kubectl');
    const config = parseConfig(
      'pack:\n  aggregationLabels: [cluster, namespace, job]\ngate:\n  scope: { cluster: a }\ndeploy:\n  kubernetes:\n    namespace: llm\n    alertmanagers: ["http://127.0.0.1:9"]\n',
      'zp.yml',
    );
    const dir = tempDir('zp-deploy-scope-');
    for (const [path, text] of renderDeploy(config)) {
      if (!path.startsWith('kubernetes/')) continue;
      const file = join(dir, path);
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, text);
    }
    const built = spawnSync(kubectl, ['kustomize', join(dir, 'kubernetes')], { encoding: 'utf8', timeout: 60_000 });
    expect(built.stderr).toBe('');
    const docs = parseAllDocuments(built.stdout).map((d) => d.toJS() as Manifest);
    const deployment = docs.find((d) => d.kind === 'Deployment');
    const exporter = deployment?.spec?.template.spec.containers.find((c) => c.name === 'zero-plane-exporter');
    expect(exporter?.env?.map((e) => e.name)).toEqual(['RESTART_SECONDS', 'POD_NAMESPACE', 'ZERO_PLANE_GATE_SCOPE_CLUSTER']);

    // The kubelet: $(VAR) in args from the container's env (fieldRef from the Pod, configMapKeyRef from the ConfigMap).
    const env = new Map<string, string>();
    for (const e of exporter?.env ?? []) {
      const ref = e.valueFrom?.configMapKeyRef;
      if (e.valueFrom?.fieldRef?.fieldPath === 'metadata.namespace') env.set(e.name, deployment?.metadata.namespace ?? '');
      else if (ref !== undefined) env.set(e.name, docs.find((d) => d.kind === 'ConfigMap' && d.metadata.name === ref.name)?.data?.[ref.key] ?? '');
    }
    expect(Object.fromEntries(env)).toEqual({ POD_NAMESPACE: 'llm', ZERO_PLANE_GATE_SCOPE_CLUSTER: 'a' });
    const args = (exporter?.args ?? []).map((a) =>
      a
        .replace(/\$\((\w+)\)/g, (_m, name: string) => env.get(name) ?? `$(${name})`)
        .replace('/etc/zero-plane-exporter/zero-plane.yml', join(dir, 'kubernetes/config/zero-plane.yml'))
        .replace(/^--web\.listen-address=.*/, '--web.listen-address=127.0.0.1:0'),
    );
    expect(args.filter((a) => a.startsWith('--gate.scope='))).toEqual(['--gate.scope=namespace=llm', '--gate.scope=cluster=a']);
    // The sidecar's own sources and checkpoint paths are the Pod's; only the gate matters here.
    const serve = await startCommand('serve', [...args, '--checkpoint.file', join(dir, 'checkpoint.json')], 20_000);
    try {
      const g = await gateOf(serve.url);
      expect(g).toMatchObject({ scope: { namespace: 'llm', cluster: 'a' }, stale: true, sourcesReachable: false });
      expect(g.sources.alertmanagers.map((s) => s.url)).toEqual(['http://127.0.0.1:9']);
    } finally {
      await serve.stop();
    }
  });
});
