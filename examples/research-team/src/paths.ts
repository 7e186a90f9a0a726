import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

/** The built `cordage` executable: the `bin` of @cordage/cli, which exports it as `@cordage/cli/bin`. */
export function cordageBin(): string {
  const path = fileURLToPath(import.meta.resolve('@cordage/cli/bin'))
  if (!existsSync(path)) throw new Error(`${path} is missing: build first (pnpm build)`)
  return path
}
