import { defineProject } from 'vitest/config';

export default defineProject({
  resolve: { conditions: ['conch-source'] },
  ssr: { resolve: { conditions: ['conch-source'] } },
  test: {
    name: 'pty',
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Real shells on real terminals: one file at a time keeps timing honest on small machines.
    fileParallelism: false,
  },
});
