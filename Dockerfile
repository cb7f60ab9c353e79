# zero-plane-exporter: Node 20 slim, production dependencies only, a non-root user.
#   docker build -t zero-plane-exporter:0.1.0 .
#   docker run --rm -p 9185:9185 -v /var/log/nginx:/var/log/nginx:ro zero-plane-exporter:0.1.0 serve /var/log/nginx/llm.jsonl
# The runtime stage installs exactly what `npm pack` ships, from the lockfile: test/live/deploy/deploy-package.test.ts
# runs these same steps (pack, unpack, npm ci --omit=dev) and then `serve` and `report` from the result.

FROM node:20-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json tsconfig.json ./
COPY bin bin
COPY src src
COPY static static
COPY alerts alerts
COPY dashboards dashboards
COPY deploy deploy
COPY docs docs
COPY README.md ./
# `npm ci` builds dist/ (the prepare script); `npm pack` writes the tarball of the files package.json lists.
RUN npm ci --no-audit --no-fund && npm pack --pack-destination /tmp && mv /tmp/zero-plane-exporter-*.tgz /tmp/zero-plane-exporter.tgz

FROM node:20-bookworm-slim
ENV NODE_ENV=production
WORKDIR /opt/zero-plane-exporter
COPY --from=build /tmp/zero-plane-exporter.tgz /tmp/
COPY --from=build /src/package-lock.json ./
RUN tar -xzf /tmp/zero-plane-exporter.tgz --strip-components=1 -C /opt/zero-plane-exporter \
 && rm /tmp/zero-plane-exporter.tgz \
 && npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
 && npm cache clean --force \
 && ln -s /opt/zero-plane-exporter/bin/zero-plane-exporter.js /usr/local/bin/zero-plane-exporter
# A numeric user, so Kubernetes' runAsNonRoot can check it; the Pod example runs it as 10001 too.
USER 10001:10001
EXPOSE 9185
# Plain HTTP on the default port; with --web.config.file (TLS, basic auth) probe from outside instead.
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s \
  CMD ["node", "-e", "fetch('http://127.0.0.1:9185/-/healthy').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["/usr/local/bin/zero-plane-exporter"]
CMD ["serve"]
