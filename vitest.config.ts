import { defineConfig } from 'vitest/config'
import projects from './vitest.workspace.js'

// Workspace packages resolve to their TypeScript sources in tests (the `source` export condition),
// so `pnpm test` never runs stale `dist/` output.
const conditions = ['source', 'import', 'module', 'node', 'default']

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions, externalConditions: ['source'] } },
  test: {
    projects,
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
})
