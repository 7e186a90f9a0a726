// Node runs the built output as native ESM, so every relative import in src/ must name its `.js` file.
import { readFileSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'

const offences = []
function walk(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name)
    if (name === 'node_modules' || name === 'dist') continue
    if (statSync(path).isDirectory()) walk(path)
    else if (/\.tsx?$/.test(name) && !name.endsWith('.d.ts')) {
      const text = readFileSync(path, 'utf8')
      for (const match of text.matchAll(/(?:from|import)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g)) {
        if (!/\.(js|json|mjs|cjs)$/.test(match[1])) offences.push(`${path}: ${match[1]}`)
      }
    }
  }
}
for (const group of ['packages', 'plugins', 'examples']) {
  for (const name of readdirSync(group)) {
    try {
      walk(join(group, name, 'src'))
    } catch {}
  }
}
if (offences.length) {
  console.error('relative imports must end in .js (Node ESM):\n' + offences.join('\n'))
  process.exit(1)
}
