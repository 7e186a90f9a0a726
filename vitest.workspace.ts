import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'

/** One vitest project per workspace package that has tests; vitest 4 reads this list through vitest.config.ts. */
export const groups = ['packages', 'plugins', 'examples']

const packageProjects = groups.flatMap((group) =>
  readdirSync(group, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(group, entry.name, 'tests')))
    .map((entry) => ({
      extends: true as const,
      test: {
        name: `${group}/${entry.name}`,
        root: join(group, entry.name),
        include: ['tests/**/*.test.ts'],
        benchmark: { include: ['tests/**/*.bench.ts', 'bench/**/*.bench.ts'] },
      },
    })),
)

/** The repository's own scripts (lint checks) have tests too. */
const scriptProjects = existsSync('scripts/tests')
  ? [{ extends: true as const, test: { name: 'scripts', root: 'scripts', include: ['tests/**/*.test.ts'] } }]
  : []

export default [...packageProjects, ...scriptProjects]
