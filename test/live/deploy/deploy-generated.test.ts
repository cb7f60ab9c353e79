// deploy/ is exactly what `generate` makes from the default config, and valid for what reads it:
// every Kubernetes manifest against its schema (kubernetes-models for core and apps,
// @kubernetes-models/prometheus-operator for ServiceMonitor, PodMonitor, PrometheusRule), the whole
// directory through `kubectl kustomize`, the objects wired to each other (selectors, port names, probes,
// the labels kube-prometheus-stack selects on), and the systemd units through `systemd-analyze verify`.
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PodMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PodMonitor';
import { PrometheusRule } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PrometheusRule';
import { ServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Service } from 'kubernetes-models/v1/Service';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { parseConfig } from '../../../src/config/load.js';
import { defaultConfig, type Config } from '../../../src/config/schema.js';
import { renderDashboards } from '../../../src/dashboards/render-dashboards.js';
import { exporterArgs } from '../../../src/deploy/kubernetes.js';
import { renderDeploy } from '../../../src/deploy/render-deploy.js';
import { renderPack } from '../../../src/pack/render-pack.js';
import { ruleGroups } from '../../../src/pack/rules.js';
import { requireBinary } from '../../helpers/binaries.js';
import { BIN } from '../../helpers/cli-process.js';
import { tempDir } from '../../helpers/temp-dir.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a manifest's spec is checked by its schema below, then read field by field
type Manifest = { apiVersion: string; kind: string; metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> }; spec?: any; data?: Record<string, string> };

const MODELS: Record<string, (m: Manifest) => { validate(): void }> = {
  'apps/v1 Deployment': (m) => new Deployment(m as never),
  'policy/v1 PodDisruptionBudget': (m) => new PodDisruptionBudget(m as never),
  'networking.k8s.io/v1 NetworkPolicy': (m) => new NetworkPolicy(m as never),
  'v1 Service': (m) => new Service(m as never),
  'v1 ConfigMap': (m) => new ConfigMap(m as never),
  'monitoring.coreos.com/v1 ServiceMonitor': (m) => new ServiceMonitor(m as never),
  'monitoring.coreos.com/v1 PodMonitor': (m) => new PodMonitor(m as never),
  'monitoring.coreos.com/v1 PrometheusRule': (m) => new PrometheusRule(m as never),
};

function documents(text: string): Manifest[] {
  return parseAllDocuments(text).map((d) => {
    expect(d.errors).toEqual([]);
    return d.toJS() as Manifest;
  });
}

/** Validates against the schema of its kind; throws with the schema's message. */
function validate(m: Manifest): void {
  const model = MODELS[`${m.apiVersion} ${m.kind}`];
  if (model === undefined) throw new Error(`no schema for ${m.apiVersion} ${m.kind}`);
  model(m).validate();
}

function manifestsOf(config: Config): Map<string, Manifest[]> {
  const out = new Map<string, Manifest[]>();
  for (const [file, text] of renderDeploy(config)) if (file.startsWith('kubernetes/') && file.endsWith('.yaml') && !file.endsWith('kustomization.yaml')) out.set(file, documents(text));
  return out;
}

const all = (config: Config) => [...manifestsOf(config).values()].flat();
const one = (config: Config, kind: string, name?: string) => {
  const found = all(config).filter((m) => m.kind === kind && (name === undefined || m.metadata.name === name));
  expect(found, `${kind} ${name ?? ''}`).toHaveLength(1);
  return found[0] as Manifest;
};

describe('deploy/ is what `generate` makes (regenerate: npx zero-plane-exporter generate)', () => {
  it('every committed file equals the generator\'s output, and no file is left over', () => {
    const rendered = renderDeploy(defaultConfig());
    for (const [file, content] of rendered) expect(readFileSync(join(ROOT, 'deploy', file), 'utf8'), `deploy/${file} drifted from its generator`).toBe(content);
    const committed = (sub: string): string[] =>
      readdirSync(join(ROOT, 'deploy', sub), { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? committed(`${sub}/${e.name}`) : [`${sub}/${e.name}`]));
    expect([...committed('kubernetes'), ...committed('systemd')].sort()).toEqual([...rendered.keys()].sort());
  });
});

describe('Kubernetes manifests', () => {
  it('every manifest in deploy/, alerts/kubernetes/ and dashboards/kubernetes/ validates against its schema', () => {
    let count = 0;
    for (const m of all(defaultConfig())) {
      expect(() => validate(m), `${m.kind} ${m.metadata.name}`).not.toThrow();
      count++;
    }
    for (const [file, text] of [...renderPack(defaultConfig()), ...renderDashboards(defaultConfig())]) {
      if (!file.startsWith('kubernetes/')) continue;
      for (const m of documents(text)) {
        expect(() => validate(m), file).not.toThrow();
        count++;
      }
    }
    expect(count).toBe(15);
  });

  it('the schemas catch what a cluster would refuse (so the check above can fail)', () => {
    const deployment = structuredClone(one(defaultConfig(), 'Deployment'));
    deployment.spec.template.spec.containers[1].ports[0].containerPort = 'metrics';
    expect(() => validate(deployment)).toThrow(/containerPort/);
    const monitor = structuredClone(one(defaultConfig(), 'ServiceMonitor'));
    monitor.spec.endpoints[0].interval = '15 seconds';
    expect(() => validate(monitor)).toThrow(/interval/);
  });

  it('`kubectl kustomize deploy/kubernetes` renders every object, the generated ConfigMaps wired into the Deployment', () => {
    const kubectl = requireBinary('kubectl');
    const r = spawnSync(kubectl, ['kustomize', join(ROOT, 'deploy/kubernetes')], { encoding: 'utf8', timeout: 60_000 });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const objects = documents(r.stdout);
    for (const m of objects) expect(() => validate(m), `${m.kind} ${m.metadata.name}`).not.toThrow();
    expect(objects.map((m) => m.kind).sort()).toEqual(['ConfigMap', 'ConfigMap', 'ConfigMap', 'ConfigMap', 'ConfigMap', 'Deployment', 'NetworkPolicy', 'PodDisruptionBudget', 'PrometheusRule', 'Service', 'Service', 'ServiceMonitor']);
    const deployment = objects.find((m) => m.kind === 'Deployment') as Manifest;
    const mapNames = objects.filter((m) => m.kind === 'ConfigMap').map((m) => m.metadata.name);
    const volumeMaps = (deployment.spec.template.spec.volumes as { configMap?: { name: string } }[]).flatMap((v) => (v.configMap ? [v.configMap.name] : []));
    expect(volumeMaps).toHaveLength(2);
    for (const name of volumeMaps) expect(mapNames).toContain(name);
    expect(volumeMaps.every((n) => /-[a-z0-9]{10}$/.test(n))).toBe(true);
    // The generated ConfigMaps hold exactly the files under deploy/kubernetes/config/.
    const nginx = objects.find((m) => m.metadata.name === volumeMaps[0]) as Manifest;
    expect(nginx.data?.['nginx.conf']).toBe(readFileSync(join(ROOT, 'deploy/kubernetes/config/nginx.conf'), 'utf8'));
  });

  it('the objects fit together: Services select the Pods, monitors select the metrics port, probes are the exporter\'s', () => {
    const config = defaultConfig();
    const deployment = one(config, 'Deployment');
    const pod = deployment.spec.template;
    const podLabels = pod.metadata.labels as Record<string, string>;
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- probes, security context and resources: validated by the schema above
    const containers = pod.spec.containers as { name: string; args?: string[]; ports?: { name: string; containerPort: number }[]; readinessProbe?: any; livenessProbe?: any; securityContext: any; resources?: any; volumeMounts: { name: string; readOnly?: boolean }[] }[];
    const exporter = containers.find((c) => c.name === 'zero-plane-exporter');
    expect(exporter?.args).toEqual(exporterArgs());
    expect(exporter?.ports).toEqual([
      { name: 'metrics', containerPort: 9185, protocol: 'TCP' },
      { name: 'probes', containerPort: 9186, protocol: 'TCP' },
    ]);
    expect(exporter?.readinessProbe).toBeUndefined();
    // On the probe listener (--web.probe-listen-address in the args): a scrape flood on 9185 does not delay it.
    expect(exporter?.livenessProbe.httpGet).toEqual({ path: '/-/healthy', port: 'probes' });
    expect(exporter?.args).toContain('--web.probe-listen-address=:9186');
    expect(exporter?.resources).toEqual(config.deploy.kubernetes.resources);
    expect(exporter?.volumeMounts.find((v) => v.name === 'gateway-log')?.readOnly).toBe(true);
    expect(pod.spec.securityContext).toMatchObject({ runAsNonRoot: true });
    expect(pod.spec.securityContext.runAsUser).toBeGreaterThan(0);
    for (const c of containers) expect(c.securityContext, c.name).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } });
    const volumes = pod.spec.volumes as { name: string; emptyDir?: object }[];
    expect(volumes.find((v) => v.name === 'gateway-log')?.emptyDir).toBeDefined();
    expect(volumes.find((v) => v.name === 'checkpoint')?.emptyDir).toBeDefined();

    const metricsService = one(config, 'Service', config.deploy.kubernetes.name);
    for (const [k, v] of Object.entries(metricsService.spec.selector as Record<string, string>)) expect(podLabels[k]).toBe(v);
    expect(metricsService.spec.ports).toEqual([{ name: 'metrics', port: 9185, targetPort: 'metrics', protocol: 'TCP' }]);
    const monitor = one(config, 'ServiceMonitor');
    for (const [k, v] of Object.entries(monitor.spec.selector.matchLabels as Record<string, string>)) expect(metricsService.metadata.labels?.[k]).toBe(v);
    expect(monitor.spec.endpoints).toEqual([{ port: 'metrics', path: '/metrics', interval: '15s' }]);
    // The job label is the Service's name, which is what the pack's selector looks for.
    expect(config.pack.selector).toBe(`job="${metricsService.metadata.name}"`);
    const podMonitor = one(config, 'PodMonitor');
    for (const [k, v] of Object.entries(podMonitor.spec.selector.matchLabels as Record<string, string>)) expect(podLabels[k]).toBe(v);
    expect(podMonitor.spec.podMetricsEndpoints[0]).toMatchObject({ port: 'metrics', relabelings: [{ action: 'replace', targetLabel: 'job', replacement: 'zero-plane-exporter' }] });
    expect(one(config, 'PrometheusRule').spec.groups).toEqual(JSON.parse(JSON.stringify(ruleGroups(config))));
  });

  it('labels for kube-prometheus-stack: release on monitors and rules, grafana_dashboard "1" and the folder annotation on dashboards; all from config', () => {
    const check = (config: Config, release: string | undefined, label: [string, string], folder: [string, string]) => {
      for (const kind of ['ServiceMonitor', 'PodMonitor', 'PrometheusRule']) expect(one(config, kind).metadata.labels?.release, kind).toBe(release);
      const dashboards = all(config).filter((m) => m.kind === 'ConfigMap');
      expect(dashboards).toHaveLength(3);
      for (const d of dashboards) {
        expect(d.metadata.labels?.[label[0]]).toBe(label[1]);
        expect(d.metadata.annotations).toEqual({ [folder[0]]: folder[1] });
      }
      for (const [file, text] of [...renderPack(config), ...renderDashboards(config)]) {
        if (!file.startsWith('kubernetes/')) continue;
        const m = documents(text)[0] as Manifest;
        if (m.kind === 'PrometheusRule') expect(m.metadata.labels?.release).toBe(release);
        else expect(m.metadata.labels?.[label[0]]).toBe(label[1]);
      }
    };
    check(defaultConfig(), 'kube-prometheus-stack', ['grafana_dashboard', '1'], ['grafana_folder', 'Zero-Plane']);
    const custom = parseConfig(
      'deploy:\n  kubernetes:\n    release: monitoring\n    labels: { team: sre }\n    dashboards: { label: dash, labelValue: "yes", folderAnnotation: folder, folder: LLM }\n',
      'custom.yml',
    );
    check(custom, 'monitoring', ['dash', 'yes'], ['folder', 'LLM']);
    for (const m of all(custom)) expect(m.metadata.labels?.team, `${m.kind} ${m.metadata.name}`).toBe('sre');
    const none = parseConfig('deploy:\n  kubernetes:\n    release: ""\n', 'none.yml');
    expect(one(none, 'ServiceMonitor').metadata.labels).not.toHaveProperty('release');
  });

  it("the sidecar's exporter config carries the config's thresholds, so the deployed exporter and the rules agree", () => {
    const config = parseConfig('signals:\n  baselineSeconds: 0.2\n  tolerance: 0.03\npack:\n  earlyWarning:\n    driftAbove: 0.02\nwindow:\n  duration: 10m\nmetrics:\n  labelValueLimit: 20\n', 'zp.yml');
    const text = renderDeploy(config).get('kubernetes/config/zero-plane.yml') as string;
    const sidecar = parseConfig(text, 'sidecar.yml');
    expect(sidecar.signals).toEqual(config.signals);
    expect(sidecar.window).toEqual(config.window);
    expect(sidecar.metrics).toEqual(config.metrics);
    expect(String(sidecar.headers.layerId.match)).toBe(String(config.headers.layerId.match));
    expect(sidecar.input.preset).toBe('nginx-json');
    expect(sidecar.sources.files).toEqual(['/var/log/zero-plane/llm.jsonl']);
    expect(sidecar.checkpoint.file).toBe('/var/lib/zero-plane-exporter/checkpoint.json');
    const nginx = renderDeploy(parseConfig('deploy:\n  kubernetes:\n    upstream: https://llm.internal:8443\n', 'u.yml')).get('kubernetes/config/nginx.conf');
    expect(nginx).toContain('proxy_pass https://llm.internal:8443;');
  });
});

describe('systemd units', () => {
  /** A root for systemd-analyze: the units, systemd's own targets, and the CLI where ExecStart expects it. */
  function unitRoot(units: Map<string, string>): { root: string; paths: string[] } {
    const root = tempDir('zp-systemd-');
    mkdirSync(join(root, 'etc/systemd/system'), { recursive: true });
    mkdirSync(join(root, 'usr/lib/systemd/system'), { recursive: true });
    mkdirSync(join(root, 'usr/local/bin'), { recursive: true });
    copyFileSync(BIN, join(root, 'usr/local/bin/zero-plane-exporter'));
    chmodSync(join(root, 'usr/local/bin/zero-plane-exporter'), 0o755);
    const systemdUnits = '/lib/systemd/system';
    for (const f of readdirSync(systemdUnits)) if (f.endsWith('.target')) copyFileSync(join(systemdUnits, f), join(root, 'usr/lib/systemd/system', f));
    const paths: string[] = [];
    for (const [file, text] of units) {
      const p = join(root, 'etc/systemd/system', file);
      writeFileSync(p, text);
      paths.push(p);
    }
    return { root, paths };
  }
  const systemdUnits = () => new Map([...renderDeploy(defaultConfig())].filter(([f]) => f.startsWith('systemd/')).map(([f, t]) => [f.slice('systemd/'.length), t]));

  it('`systemd-analyze verify` passes on the service and socket units, and fails on a broken one', () => {
    const analyze = requireBinary('systemd-analyze');
    const { root, paths } = unitRoot(systemdUnits());
    const ok = spawnSync(analyze, ['verify', `--root=${root}`, ...paths], { encoding: 'utf8', timeout: 60_000 });
    expect(`${ok.stdout}${ok.stderr}`).toBe('');
    expect(ok.status).toBe(0);
    const broken = new Map(systemdUnits());
    broken.set('zero-plane-exporter.service', (broken.get('zero-plane-exporter.service') as string).replace('ExecStart=/usr/local/bin/', 'ExecStart=/usr/local/sbin/'));
    const bad = unitRoot(broken);
    const r = spawnSync(analyze, ['verify', `--root=${bad.root}`, ...bad.paths], { encoding: 'utf8', timeout: 60_000 });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain('is not executable');
  });

  it('hardened: DynamicUser, ProtectSystem=strict, a StateDirectory for the checkpoint, read-only log directories; exposure "OK" by systemd-analyze security', () => {
    const service = systemdUnits().get('zero-plane-exporter.service') as string;
    for (const line of ['DynamicUser=yes', 'ProtectSystem=strict', 'StateDirectory=zero-plane-exporter', 'BindReadOnlyPaths=/var/log/nginx', 'SupplementaryGroups=adm', 'NoNewPrivileges=yes', 'CapabilityBoundingSet=']) {
      expect(service.split('\n')).toContain(line);
    }
    // serve keeps its young generation small itself (cli/heap-limits.ts): no NODE_OPTIONS that would
    // take the user's place (a --max-semi-space-size in /etc/default is theirs, and serve then leaves it).
    expect(service).not.toContain('NODE_OPTIONS');
    expect(readFileSync(new URL('../../../Dockerfile', import.meta.url), 'utf8')).not.toContain('NODE_OPTIONS');
    expect(service).toMatch(/^ExecStart=\/usr\/local\/bin\/zero-plane-exporter serve --web\.systemd-socket --config\.file=\/etc\/zero-plane-exporter\/zero-plane\.yml --checkpoint\.file=%S\/zero-plane-exporter\/checkpoint\.json \$ARGS$/m);
    expect(systemdUnits().get('zero-plane-exporter.socket')).toMatch(/^ListenStream=9185$/m);
    const { root, paths } = unitRoot(systemdUnits());
    const r = spawnSync(requireBinary('systemd-analyze'), ['security', '--offline=true', `--root=${root}`, paths[0] as string], { encoding: 'utf8', timeout: 60_000 });
    const level = /Overall exposure level for zero-plane-exporter\.service: ([\d.]+) (\w+)/.exec(r.stdout);
    expect(level?.[2], r.stdout.slice(-400)).toBe('OK');
    expect(Number(level?.[1])).toBeLessThanOrEqual(2);
  });
});
