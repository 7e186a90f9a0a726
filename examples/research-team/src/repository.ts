import { mkdir, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'

/** The small repository the team surveys: three areas, each with code and a note on what is unfinished. */
export const FILES: Record<string, string> = {
  'src/auth/login.js': 'export function login(user, password) {\n  // TODO: rate-limit failed attempts\n  return check(user, password)\n}\n',
  'src/auth/session.js': 'export const SESSION_TTL_MINUTES = 30\n',
  'src/billing/invoice.js': 'export function total(lines) {\n  return lines.reduce((sum, line) => sum + line.amount, 0)\n}\n// TODO: currency rounding\n',
  'src/billing/tax.js': 'export const VAT = 0.2\n',
  'src/search/index.js': 'export function search(items, query) {\n  return items.filter((item) => item.title.includes(query))\n}\n',
  'README.md': '# shop\n\nAuth, billing and search for a small shop.\n',
}

/** Writes the repository under `root`. */
export async function writeRepository(root: string): Promise<void> {
  for (const [path, text] of Object.entries(FILES)) {
    await mkdir(dirname(join(root, path)), { recursive: true })
    await writeFile(join(root, path), text)
  }
}
