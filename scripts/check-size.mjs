// Sizes the conventions set (CONTRIBUTING.md): source files stay under 400 lines (split by concept before
// then) — every .ts/.js/.mjs under a package's src/ and under scripts/; tests and fixtures are not source —
// and each package's README stays within 150 lines.
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'

export const SOURCE_LIMIT = 400
export const README_LIMIT = 150

const lineCount = (path) => readFileSync(path, 'utf8').replace(/\n$/, '').split('\n').length

/** Every size offence under `root`, one line each naming the file and its length. */
export function checkSizes(root) {
  const offences = []
  const walk = (dir) => {
    if (!existsSync(dir)) return
    for (const name of readdirSync(dir)) {
      const path = join(dir, name)
      if (name === 'node_modules' || name === 'dist') continue
      if (statSync(path).isDirectory()) walk(path)
      else if (/\.(tsx?|m?js)$/.test(name) && !name.endsWith('.d.ts')) {
        const lines = lineCount(path)
        if (lines > SOURCE_LIMIT) offences.push(`${path.slice(root.length + 1)}: ${lines} lines (source files stay under ${SOURCE_LIMIT}; split by concept)`)
      }
    }
  }
  for (const group of ['packages', 'plugins', 'examples']) {
    if (!existsSync(join(root, group))) continue
    for (const name of readdirSync(join(root, group))) {
      walk(join(root, group, name, 'src'))
      const readme = join(root, group, name, 'README.md')
      if (!existsSync(readme)) continue
      const lines = lineCount(readme)
      if (lines > README_LIMIT) offences.push(`${group}/${name}/README.md: ${lines} lines (a package README stays within ${README_LIMIT})`)
    }
  }
  walk(join(root, 'scripts'))
  return offences
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const offences = checkSizes(resolve(process.argv[2] ?? '.'))
  if (offences.length) {
    console.error(`sizes over the conventions' limits (CONTRIBUTING.md):\n${offences.join('\n')}`)
    process.exit(1)
  }
}
