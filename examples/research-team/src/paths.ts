import { existsSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The example's own directory. */
export const exampleDir = join(dirname(fileURLToPath(import.meta.url)), '..')

/** The built `cordage` executable of the @cordage/cli package this example depends on. */
export function cordageBin(): string {
  let dir = dirname(fileURLToPath(import.meta.resolve('@cordage/cli')))
  while (dir !== dirname(dir)) {
    const manifest = join(dir, 'package.json')
    if (existsSync(manifest)) {
      const { name, bin } = JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string; bin?: Record<string, string> }
      if (name === '@cordage/cli' && bin?.cordage) {
        const path = join(dir, bin.cordage)
        if (!existsSync(path)) throw new Error(`${path} is missing: build first (pnpm build)`)
        return path
      }
    }
    dir = dirname(dir)
  }
  throw new Error('cannot find the @cordage/cli package')
}
