import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The example's own directory (fixture, cassette, cordage.yml). */
export const exampleDir = join(dirname(fileURLToPath(import.meta.url)), '..')

/** The built `cordage` executable: the `bin` of @cordage/cli, which exports it as `@cordage/cli/bin`. */
export function cordageBin(): string {
  const path = fileURLToPath(import.meta.resolve('@cordage/cli/bin'))
  if (!existsSync(path)) throw new Error(`${path} is missing: build first (pnpm build)`)
  return path
}
