import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: { conditions: ['conch-source'] },
  ssr: { resolve: { conditions: ['conch-source'] } },
  test: {
    projects: ['packages/*', 'apps/*', 'scripts'],
  },
});
