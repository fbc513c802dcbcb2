import { defineProject } from 'vitest/config';

export default defineProject({
  resolve: { conditions: ['conch-source'] },
  ssr: { resolve: { conditions: ['conch-source'] } },
  test: {
    name: 'cli',
    include: ['src/**/*.test.ts', 'page/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Integration tests spawn real servers and PTYs: one file at a time keeps timings honest on small
    // machines (and servers from different files from disturbing each other).
    fileParallelism: false,
  },
});
