import { defineConfig } from 'vitest/config';

// Two projects: `unit` (pure code, beside it as foo.test.ts) and `cluster` (anything that touches
// Kubernetes: *.cluster.test.ts beside the code, and e2e/). The cluster project starts one real
// control plane per run in its global setup and gives each test file its own namespace.
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          sequence: { groupOrder: 0 },
          include: [
            '{api,runtime,controller,agent,proxy,cli,console,tools,bench,test}/**/*.test.ts',
          ],
          exclude: ['**/*.cluster.test.ts', 'node_modules/**'],
        },
      },
      {
        test: {
          name: 'cluster',
          sequence: { groupOrder: 1 },
          include: ['**/*.cluster.test.ts', 'e2e/**/*.test.ts'],
          exclude: ['node_modules/**'],
          globalSetup: ['test/cluster/global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
          // Two cores: the control plane needs one; test files run two at a time.
          maxWorkers: 2,
        },
      },
    ],
  },
});
