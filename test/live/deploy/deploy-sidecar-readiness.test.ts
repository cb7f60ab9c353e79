// The sidecar cannot take the gateway down, checked on what `kubectl kustomize deploy/kubernetes` renders
// (each object validated against its schema): the kubelet's rule for a Pod's readiness (pkg/kubelet/prober
// and pkg/kubelet/status: every container, and every restartable init container, must be ready; a container
// is ready when it runs, has passed its startup probe if it has one, and its readiness probe if it has one)
// applied to the rendered Pod says that only the gateway's probe decides, and the exporter's container runs
// through any failure of `serve` (deploy-exporter-supervisor.test.ts runs that for real). Also: the exporter's
// own uid, the PodDisruptionBudget, the topology spread and the NetworkPolicy, wired to the Pod and its ports.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import type { IContainer } from 'kubernetes-models/v1/Container';
import type { IPodSpec } from 'kubernetes-models/v1/PodSpec';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { parseConfig } from '../../../src/config/load.js';
import { defaultConfig } from '../../../src/config/schema.js';
import { EXPORTER_COMMAND } from '../../../src/deploy/kubernetes.js';
import { renderDeploy } from '../../../src/deploy/render-deploy.js';
import { requireBinary } from '../../helpers/binaries.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

interface Rendered {
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  // The kinds read here are validated by their kubernetes-models class before they are read.
  spec: Record<string, unknown>;
}

function kustomize(): Rendered[] {
  const r = spawnSync(requireBinary('kubectl'), ['kustomize', join(ROOT, 'deploy/kubernetes')], { encoding: 'utf8', timeout: 60_000 });
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  return parseAllDocuments(r.stdout).map((d) => d.toJS() as Rendered);
}

const objects = kustomize();
const only = (kind: string) => {
  const found = objects.filter((o) => o.kind === kind);
  expect(found, kind).toHaveLength(1);
  return found[0] as Rendered;
};
const deployment = new Deployment(only('Deployment') as never);
deployment.validate();
const pod = deployment.spec?.template.spec as IPodSpec;
const podLabels = deployment.spec?.template.metadata?.labels ?? {};

/** What the kubelet needs for a container to count as ready, given which of its probes pass. */
interface ContainerState {
  running: boolean;
  startupPassed: boolean;
  readinessPassed: boolean;
}

/** The kubelet's Pod Ready condition for `spec` (no readiness gates pending), containers in the given states. */
function podReady(spec: IPodSpec, state: (name: string) => ContainerState): boolean {
  if ((spec.readinessGates ?? []).length > 0) return false;
  const counted: IContainer[] = [...spec.containers, ...(spec.initContainers ?? []).filter((c) => c.restartPolicy === 'Always')];
  return counted.every((c) => {
    const s = state(c.name);
    const started = s.running && (c.startupProbe === undefined || s.startupPassed);
    return started && (c.readinessProbe === undefined || s.readinessPassed);
  });
}

/** Every container running and passing; `failing` runs (its process is the supervisor) but passes no probe. */
const withFailing = (failing: string) => (name: string): ContainerState => (name === failing ? { running: true, startupPassed: false, readinessPassed: false } : { running: true, startupPassed: true, readinessPassed: true });

describe('the gateway Pod stays ready whatever the exporter does', () => {
  it("the Pod's readiness is the gateway container's alone: the exporter and the rotator have no readiness or startup probe, there are no readiness gates or init containers", () => {
    const gateway = pod.containers.find((c) => c.name === 'nginx') as IContainer;
    for (const c of pod.containers) {
      if (c === gateway) continue;
      expect(c.readinessProbe, c.name).toBeUndefined();
      expect(c.startupProbe, c.name).toBeUndefined();
    }
    expect(pod.readinessGates).toBeUndefined();
    expect(pod.initContainers).toBeUndefined();
    // The gateway's probe is on its own port and answered by nginx itself, never proxied or passed to the exporter.
    expect(gateway.readinessProbe?.httpGet).toEqual({ path: '/healthz', port: 'http' });
    expect(gateway.ports?.map((p) => p.name)).toEqual(['http']);
    const conf = readFileSync(join(ROOT, 'deploy/kubernetes/config/nginx.conf'), 'utf8');
    expect(conf).toMatch(/location = \/healthz \{\s+access_log off;\s+return 200 [^}]*\}/);

    // The kubelet's rule: with the exporter running but answering no probe, the Pod is ready; with nginx failing, not.
    expect(podReady(pod, withFailing('zero-plane-exporter'))).toBe(true);
    expect(podReady(pod, withFailing('log-rotator'))).toBe(true);
    expect(podReady(pod, withFailing('nginx'))).toBe(false);
    // And the rule catches what the old manifests did: a readiness (or startup) probe on the exporter.
    const exporterIndex = pod.containers.findIndex((c) => c.name === 'zero-plane-exporter');
    for (const probe of ['readinessProbe', 'startupProbe'] as const) {
      const old = structuredClone(pod);
      (old.containers[exporterIndex] as IContainer)[probe] = { httpGet: { path: '/-/ready', port: 'metrics' } };
      expect(podReady(old, withFailing('zero-plane-exporter')), probe).toBe(false);
    }
  });

  it("the exporter container's process is the supervisor, so it runs through any exit of serve; liveness only after 60 s without an answer", () => {
    const exporter = pod.containers.find((c) => c.name === 'zero-plane-exporter') as IContainer;
    expect(exporter.command).toEqual(EXPORTER_COMMAND);
    expect(exporter.command?.[2]).toMatch(/while :; do\n\s+"\$0" serve "\$@" &/);
    // Kubernetes expands $(VAR) in command and args: the script has none, so the shell sees it as written.
    expect(exporter.command?.join(' ')).not.toMatch(/\$\(/);
    const live = exporter.livenessProbe;
    expect(live?.httpGet).toEqual({ path: '/-/healthy', port: 'probes' });
    expect((live?.periodSeconds ?? 10) * (live?.failureThreshold ?? 3)).toBeGreaterThanOrEqual(60);
    // The memory limit is the measured peak (~232 MiB under 200 concurrent scrapes) with headroom.
    expect(exporter.resources?.limits?.memory).toBe('384Mi');
  });

  it('the exporter runs as its own non-root user, not the gateway\'s; it reads the log through the Pod\'s fsGroup', () => {
    const byName = new Map(pod.containers.map((c) => [c.name, c]));
    const podUser = pod.securityContext?.runAsUser;
    const exporterUser = byName.get('zero-plane-exporter')?.securityContext?.runAsUser;
    expect(pod.securityContext?.runAsNonRoot).toBe(true);
    expect(exporterUser).toBeGreaterThan(0);
    expect(exporterUser).not.toBe(podUser);
    expect(byName.get('zero-plane-exporter')?.securityContext?.runAsGroup).toBe(exporterUser);
    // nginx and the rotator share the gateway's user: the rotator signals nginx to reopen its log.
    for (const name of ['nginx', 'log-rotator']) expect(byName.get(name)?.securityContext?.runAsUser, name).toBeUndefined();
    expect(pod.securityContext?.fsGroup).toBe(podUser);
    expect(byName.get('zero-plane-exporter')?.volumeMounts?.find((v) => v.name === 'gateway-log')?.readOnly).toBe(true);
  });

  it('a PodDisruptionBudget and a topology spread over nodes, both selecting the gateway Pods', () => {
    const pdb = new PodDisruptionBudget(only('PodDisruptionBudget') as never);
    pdb.validate();
    for (const [k, v] of Object.entries(pdb.spec?.selector?.matchLabels ?? {})) expect(podLabels[k]).toBe(v);
    expect(pdb.spec?.maxUnavailable).toBe(1);
    expect(pdb.spec?.maxUnavailable).toBeLessThan(deployment.spec?.replicas ?? 0);
    const [spread, ...more] = pod.topologySpreadConstraints ?? [];
    expect(more).toEqual([]);
    expect(spread).toMatchObject({ topologyKey: 'kubernetes.io/hostname', maxSkew: 1, whenUnsatisfiable: 'DoNotSchedule', matchLabelKeys: ['pod-template-hash'] });
    for (const [k, v] of Object.entries(spread?.labelSelector?.matchLabels ?? {})) expect(podLabels[k]).toBe(v);
  });

  it("a NetworkPolicy: the exporter's port only from the monitoring namespace, the gateway's port open, egress untouched", () => {
    const policy = new NetworkPolicy(only('NetworkPolicy') as never);
    policy.validate();
    for (const [k, v] of Object.entries(policy.spec?.podSelector.matchLabels ?? {})) expect(podLabels[k]).toBe(v);
    expect(policy.spec?.policyTypes).toEqual(['Ingress']);
    expect(policy.spec?.egress).toBeUndefined();
    const ports = new Map(pod.containers.flatMap((c) => (c.ports ?? []).map((p) => [p.name, p.containerPort])));
    const rules = policy.spec?.ingress ?? [];
    expect(rules).toHaveLength(2);
    // Every container port is in exactly one rule (a port in none would be closed by the policy).
    const covered = rules.flatMap((r) => (r.ports ?? []).map((p) => p.port));
    expect(covered.sort()).toEqual([...ports.keys()].sort());
    const metrics = rules.find((r) => r.ports?.some((p) => p.port === 'metrics'));
    expect(metrics?.from).toEqual([{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }]);
    const http = rules.find((r) => r.ports?.some((p) => p.port === 'http'));
    expect(http?.from).toBeUndefined();
  });

  it('every new value comes from deploy.kubernetes, validated', () => {
    const custom = parseConfig(
      [
        'deploy:',
        '  kubernetes:',
        '    gatewayUser: 2000',
        '    exporterUser: 3000',
        '    maxUnavailable: 2',
        '    exporterRestartSeconds: 7',
        '    probes: { livenessPeriodSeconds: 15, livenessFailureThreshold: 8 }',
        '    topologySpread: { topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: ScheduleAnyway }',
        '    networkPolicy: { monitoringNamespaceSelector: { team: observability }, gatewayIngress: false }',
      ].join('\n'),
      'custom.yml',
    );
    const files = renderDeploy(custom);
    const doc = (file: string) => parseAllDocuments(files.get(`kubernetes/${file}`) as string)[0]?.toJS() as { spec: unknown };
    const spec = (doc('gateway-deployment.yaml').spec as { template: { spec: IPodSpec } }).template.spec;
    const exporter = spec.containers.find((c) => c.name === 'zero-plane-exporter') as IContainer;
    expect(spec.securityContext).toMatchObject({ runAsUser: 2000, runAsGroup: 2000, fsGroup: 2000 });
    expect(exporter.securityContext).toMatchObject({ runAsUser: 3000, runAsGroup: 3000 });
    expect(exporter.env).toContainEqual({ name: 'RESTART_SECONDS', value: '7' });
    expect(exporter.livenessProbe).toMatchObject({ periodSeconds: 15, failureThreshold: 8 });
    expect(spec.topologySpreadConstraints?.[0]).toMatchObject({ topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'ScheduleAnyway' });
    expect((doc('poddisruptionbudget.yaml').spec as { maxUnavailable: number }).maxUnavailable).toBe(2);
    const ingress = (doc('networkpolicy.yaml').spec as { ingress: { from?: unknown; ports: { port: string }[] }[] }).ingress;
    expect(ingress).toEqual([
      {
        from: [{ namespaceSelector: { matchLabels: { team: 'observability' } } }],
        ports: [
          { port: 'metrics', protocol: 'TCP' },
          { port: 'probes', protocol: 'TCP' },
        ],
      },
    ]);

    const off = renderDeploy(parseConfig('deploy:\n  kubernetes:\n    networkPolicy: { enabled: false }\n', 'off.yml'));
    expect(off.has('kubernetes/networkpolicy.yaml')).toBe(false);
    expect(off.get('kubernetes/kustomization.yaml')).not.toContain('networkpolicy.yaml');

    expect(() => parseConfig('deploy:\n  kubernetes:\n    exporterUser: 10001\n', 'same.yml')).toThrow(/same\.yml.*exporterUser.*must differ from gatewayUser/s);
    expect(() => parseConfig('deploy:\n  kubernetes:\n    gatewayUser: 0\n', 'root.yml')).toThrow(/root\.yml.*gatewayUser/s);
    expect(() => parseConfig('deploy:\n  kubernetes:\n    networkPolicy: { monitoringNamespaceSelector: {} }\n', 'open.yml')).toThrow(/open\.yml.*monitoringNamespaceSelector.*every namespace/s);
    expect(defaultConfig().deploy.kubernetes.networkPolicy.enabled).toBe(true);
  });
});
