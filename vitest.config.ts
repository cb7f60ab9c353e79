import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    // Integration tests start servers on loopback; two cores, so keep parallelism modest.
    maxWorkers: 2,
    // One TMPDIR per run, checked empty at the end; tempDir() dirs are removed after each file.
    globalSetup: ['test/setup/run-tmpdir.ts'],
    setupFiles: ['test/setup/remove-temp-dirs.ts'],
  },
});
