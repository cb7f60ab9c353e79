# zero-plane-exporter: Node 22 LTS slim, production dependencies only, a non-root user.
#   docker build -t zero-plane-exporter:0.1.0 .
#   docker run --rm -p 9185:9185 -v /var/log/nginx:/var/log/nginx:ro zero-plane-exporter:0.1.0 serve /var/log/nginx/llm.jsonl
# The runtime stage installs exactly what `npm pack` ships, from the lockfile: test/live/deploy/deploy-package.test.ts
# runs these same steps (pack, unpack, npm ci --omit=dev) and then `serve` and `report` from the result;
# test/unit/deploy/dockerfile.test.ts checks this file (base major, non-root user, every packaged directory copied).
#
# The base image, one for both stages. Pin it by digest (tag@sha256:…, so a rebuild gets the same bytes) and
# update the pin with (docs/deployment.md#container-image):
#   digest=$(docker buildx imagetools inspect node:22-bookworm-slim --format '{{json .Manifest}}' | jq -r .digest)
#   sed -i "s|^ARG NODE_IMAGE=.*|ARG NODE_IMAGE=node:22-bookworm-slim@$digest|" Dockerfile
# PENDING: the machines this was written on reach no registry, so the digest is not pinned yet: the tag alone.
ARG NODE_IMAGE=node:22-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json tsconfig.json ./
COPY bin bin
COPY build build
COPY src src
COPY static static
COPY alerts alerts
COPY dashboards dashboards
COPY deploy deploy
COPY mixin mixin
COPY docs docs
COPY proto proto
COPY README.md ./
# `npm ci` builds dist/ (the prepare script); `npm pack` writes the tarball of the files package.json lists.
RUN npm ci --no-audit --no-fund && npm pack --pack-destination /tmp && mv /tmp/zero-plane-exporter-*.tgz /tmp/zero-plane-exporter.tgz

FROM ${NODE_IMAGE}
ENV NODE_ENV=production
WORKDIR /opt/zero-plane-exporter
COPY --from=build /tmp/zero-plane-exporter.tgz /tmp/
COPY --from=build /src/package-lock.json ./
RUN tar -xzf /tmp/zero-plane-exporter.tgz --strip-components=1 -C /opt/zero-plane-exporter \
 && rm /tmp/zero-plane-exporter.tgz \
 && npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
 && npm cache clean --force \
 && ln -s /opt/zero-plane-exporter/bin/zero-plane-exporter.js /usr/local/bin/zero-plane-exporter
# A numeric user, so Kubernetes' runAsNonRoot can check it. The Pod sets its own: the exporter runs as
# deploy.kubernetes.exporterUser (10002), the log rotator (same image) as the gateway's user (10001).
USER 10001:10001
EXPOSE 9185
# For docker and podman; Kubernetes ignores HEALTHCHECK (the Pod's livenessProbe does this there). Plain HTTP on
# the default port; with --web.config.file (TLS, basic auth) probe from outside instead.
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s \
  CMD ["node", "-e", "fetch('http://127.0.0.1:9185/-/healthy').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["/usr/local/bin/zero-plane-exporter"]
CMD ["serve"]
