// The Dockerfile, read as Docker reads it (continuation lines joined, one instruction a line): a Node 22 LTS
// (or newer) base for every stage, pinned by a well-formed digest or marked PENDING beside the command that
// pins it; a numeric non-root USER for the runtime stage; the build stage copies every directory package.json
// "files" packs (dist/ is built there by `npm ci`'s prepare script); a HEALTHCHECK on /-/healthy. No registry
// is reachable here, so the image itself is not built: deploy-package.test.ts runs the runtime stage's steps.
// package.json's engines admit the Node 20 the tests run on and 22, the recommended runtime.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const DOCKERFILE = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
interface PackageJson {
  files: string[];
  engines: { node: string };
  scripts: Record<string, string>;
}
const PKG = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as PackageJson;

interface Instruction {
  op: string;
  args: string;
}

function instructions(text: string): Instruction[] {
  return text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const [op, ...rest] = line.split(/\s+/);
      return { op: (op as string).toUpperCase(), args: rest.join(' ') };
    });
}

/** What is wrong with a Dockerfile, for this package; [] when nothing is. */
function problems(text: string, pkg: PackageJson): string[] {
  const out: string[] = [];
  const all = instructions(text);
  const args = new Map(all.filter((i) => i.op === 'ARG').map((i) => i.args.split('=') as [string, string]));
  const stages: Instruction[][] = [];
  for (const i of all) {
    if (i.op === 'FROM') stages.push([i]);
    else stages.at(-1)?.push(i);
  }
  if (stages.length === 0) return ['no FROM'];
  for (const [from] of stages) {
    const ref = (from as Instruction).args.split(/\s+/)[0] as string;
    const image = ref.replace(/^\$\{(\w+)\}$/, (_m, name: string) => args.get(name) ?? `unset ARG ${name}`);
    const m = /^(?:docker\.io\/(?:library\/)?)?node:(\d+)[\w.-]*(@sha256:[0-9a-f]{64})?$/.exec(image);
    if (m === null) {
      out.push(`FROM ${image}: not a node:MAJOR… image (tag, optionally @sha256:<64 hex>)`);
      continue;
    }
    if (Number(m[1]) < 22) out.push(`FROM ${image}: Node ${m[1]} (22 LTS or newer wanted)`);
    if (m[2] === undefined && !/^# PENDING: .*digest/m.test(text)) out.push(`FROM ${image}: not pinned by digest, and no "# PENDING:" note saying why`);
  }
  if (!text.includes('docker buildx imagetools inspect')) out.push('no command to update the digest pin');
  const build = stages[0] as Instruction[];
  const runtime = stages.at(-1) as Instruction[];
  const copied = new Set(build.filter((i) => i.op === 'COPY' && !i.args.startsWith('--from')).flatMap((i) => i.args.split(/\s+/).slice(0, -1)));
  for (const entry of pkg.files) {
    if (entry === 'dist') continue;
    if (!copied.has(entry)) out.push(`the build stage does not COPY ${entry}, which package.json "files" packs`);
  }
  for (const source of copied) if (!existsSync(join(ROOT, source))) out.push(`COPY ${source}: not in the repository`);
  // dist/ is what `npm ci` builds through prepare (tsc, outDir dist), before `npm pack`.
  if (!/npm run build/.test(pkg.scripts.prepare ?? '') || !build.some((i) => i.op === 'RUN' && /npm ci\b.*&& npm pack/.test(i.args))) out.push('dist/ is not built by npm ci (prepare) before npm pack');
  const user = runtime.filter((i) => i.op === 'USER').at(-1);
  const uid = /^(\d+)(?::(\d+))?$/.exec(user?.args ?? '');
  if (uid === null) out.push(`runtime USER ${user?.args ?? '(none)'}: not numeric (runAsNonRoot cannot check a name)`);
  else if (Number(uid[1]) === 0 || Number(uid[2] ?? 1) === 0) out.push(`runtime USER ${user?.args}: root`);
  const entrypoint = runtime.findIndex((i) => i.op === 'ENTRYPOINT');
  if (user !== undefined && runtime.indexOf(user) > entrypoint) out.push('USER comes after ENTRYPOINT');
  if (!runtime.some((i) => i.op === 'HEALTHCHECK' && i.args.includes('/-/healthy'))) out.push('no HEALTHCHECK on /-/healthy');
  return out;
}

describe('Dockerfile', () => {
  it('Node ≥ 22 in every stage (digest pinned or marked PENDING), a numeric non-root USER, every packaged directory copied, a HEALTHCHECK', () => {
    expect(problems(DOCKERFILE, PKG)).toEqual([]);
  });

  it('the check catches what it is for (Node 20, a root or named user, a directory not copied, an unmarked tag, a bad digest)', () => {
    const cases: [string, RegExp][] = [
      [DOCKERFILE.replace(/^ARG NODE_IMAGE=node:22-bookworm-slim$/m, 'ARG NODE_IMAGE=node:20-bookworm-slim'), /Node 20/],
      [DOCKERFILE.replace('USER 10001:10001', 'USER 0:0'), /root/],
      [DOCKERFILE.replace('USER 10001:10001', 'USER node'), /not numeric/],
      [DOCKERFILE.replace('COPY mixin mixin\n', ''), /does not COPY mixin/],
      [DOCKERFILE.replace(/^# PENDING: .*$/m, ''), /not pinned by digest/],
      [DOCKERFILE.replace(/^ARG NODE_IMAGE=node:22-bookworm-slim$/m, 'ARG NODE_IMAGE=node:22-bookworm-slim@sha256:abc'), /not a node:MAJOR/],
      [DOCKERFILE.replace(/^HEALTHCHECK[^\n]*\\\n[^\n]*\n/m, ''), /HEALTHCHECK/],
    ];
    for (const [text, why] of cases) {
      expect(text, String(why)).not.toBe(DOCKERFILE);
      expect(problems(text, PKG).join('\n'), String(why)).toMatch(why);
    }
    // A real pin passes.
    const pinned = DOCKERFILE.replace(/^ARG NODE_IMAGE=node:22-bookworm-slim$/m, `ARG NODE_IMAGE=node:22-bookworm-slim@sha256:${'0'.repeat(64)}`).replace(/^# PENDING: .*$/m, '');
    expect(problems(pinned, PKG)).toEqual([]);
  });
});

describe('package.json engines', () => {
  /** Whether `version` satisfies a range of `^X.Y`, `>=X[.Y]` alternatives joined by `||` (the forms engines uses here). */
  function satisfies(range: string, version: string): boolean {
    const [major, minor] = version.split('.').map(Number) as [number, number];
    return range.split('||').some((alt) => {
      const m = /^\s*(\^|>=)(\d+)(?:\.(\d+))?\s*$/.exec(alt);
      if (m === null) throw new Error(`engines: "${alt}" is not a form this check reads`);
      const [wantMajor, wantMinor] = [Number(m[2]), Number(m[3] ?? 0)];
      if (m[1] === '^') return major === wantMajor && minor >= wantMinor;
      return major > wantMajor || (major === wantMajor && minor >= wantMinor);
    });
  }

  it('admit the Node 20 the tests run on (20.19 and later) and Node 22 and newer; not older 20s or 21', () => {
    const range = PKG.engines.node;
    for (const v of ['20.19.0', '20.20.1', '22.0.0', '22.11.0', '24.1.0']) expect(satisfies(range, v), v).toBe(true);
    for (const v of ['18.20.0', '20.18.0', '21.7.0']) expect(satisfies(range, v), v).toBe(false);
    expect(satisfies(range, process.versions.node), `this Node, ${process.versions.node}`).toBe(true);
  });
});
