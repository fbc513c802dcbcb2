import { defineProject } from 'vitest/config';

export default defineProject({
  resolve: { conditions: ['conch-source'] },
  ssr: { resolve: { conditions: ['conch-source'] } },
  test: { name: 'service', include: ['src/**/*.test.ts', 'test/**/*.test.ts'] },
});
