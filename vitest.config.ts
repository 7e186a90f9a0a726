import { defineConfig } from 'vitest/config'
import projects from './vitest.workspace.js'

// Workspace packages resolve to their TypeScript sources in tests (the `cordage-source` export condition),
// so `pnpm test` never runs stale `dist/` output.
const conditions = ['cordage-source', 'import', 'module', 'node', 'default']

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions, externalConditions: ['cordage-source'] } },
  test: {
    projects,
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
})
