import { defineProject } from 'vitest/config';

export default defineProject({
  resolve: { conditions: ['conch-source'] },
  ssr: { resolve: { conditions: ['conch-source'] } },
  test: {
    name: 'container',
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // The files share the machine's container storage; each starts its own engine service.
    fileParallelism: false,
  },
});
