import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // test/unit: no server, no child process (npm run test:unit); test/live: real servers and processes.
    include: ['test/unit/**/*.test.ts', 'test/live/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    // Integration tests start servers on loopback; two cores, so keep parallelism modest.
    maxWorkers: 2,
    // One TMPDIR per run, checked empty at the end; tempDir() dirs are removed after each file.
    globalSetup: ['test/setup/run-tmpdir.ts'],
    setupFiles: ['test/setup/remove-temp-dirs.ts', 'test/setup/stop-child-writers.ts', 'test/setup/unit-starts-nothing.ts'],
  },
});
