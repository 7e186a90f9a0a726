// Source files stay under 400 lines (split by concept before then): every .ts/.js/.mjs under a
// package's src/ and under scripts/. Tests and fixtures are not source.
import { readFileSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'

const LIMIT = 400
const offences = []
function walk(dir) {
  let names
  try {
    names = readdirSync(dir)
  } catch {
    return
  }
  for (const name of names) {
    const path = join(dir, name)
    if (name === 'node_modules' || name === 'dist') continue
    if (statSync(path).isDirectory()) walk(path)
    else if (/\.(tsx?|m?js)$/.test(name) && !name.endsWith('.d.ts')) {
      const lines = readFileSync(path, 'utf8').split('\n').length
      if (lines > LIMIT) offences.push(`${path}: ${lines} lines`)
    }
  }
}
for (const group of ['packages', 'plugins', 'examples']) {
  for (const name of readdirSync(group)) walk(join(group, name, 'src'))
}
walk('scripts')
if (offences.length) {
  console.error(`source files over ${LIMIT} lines (split them by concept):\n${offences.join('\n')}`)
  process.exit(1)
}
