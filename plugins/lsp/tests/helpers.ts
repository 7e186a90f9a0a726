import { readdirSync, readFileSync } from 'node:fs'
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll } from 'vitest'
import { createTestContext } from '@cordage/testing'
import * as lsp from '../src/index.js'

const temps: string[] = []
afterAll(async () => {
  await Promise.all(temps.map((dir) => rm(dir, { recursive: true, force: true })))
})

/** The typescript-language-server bin this package installs, and the tsserver it should use. */
export const TSLS = join(import.meta.dirname, '../node_modules/.bin/typescript-language-server')
const TSSERVER = createRequire(import.meta.url).resolve('typescript/lib/tsserver.js')

/** The server entry for TypeScript files. */
export const typescriptServer = {
  name: 'typescript',
  command: TSLS,
  args: ['--stdio'],
  globs: ['**/*.ts', '**/*.tsx'],
  languageId: 'typescript',
  // The syntax-only server would answer before the project loads (definitions stop at imports).
  initializationOptions: { tsserver: { path: TSSERVER, useSyntaxServer: 'never' } },
}

/** The fake server (a real child process speaking JSON-RPC, `fixtures/fake-server.mjs`) in `mode`, for `*.txt` files. */
export const FAKE_SERVER = join(import.meta.dirname, 'fixtures/fake-server.mjs')
export const fakeServer = (mode: string, env: Record<string, string> = {}) => ({
  name: `fake-${mode}`,
  command: process.execPath,
  args: [FAKE_SERVER, mode],
  globs: ['**/*.txt'],
  languageId: 'plaintext',
  env,
})

/** Files of the fixture project. */
export const fixture: Record<string, string> = {
  'tsconfig.json': JSON.stringify({
    compilerOptions: { strict: true, target: 'ES2022', module: 'ESNext', moduleResolution: 'Bundler', noEmit: true, lib: ['ES2022'] },
    include: ['src'],
  }),
  'src/math.ts': 'export function add(a: number, b: number): number {\n  return a + b\n}\n\nexport const answer: number = add(40, 2)\n',
  'src/main.ts':
    "import { add } from './math.js'\n\n/** Doubles a number. */\nexport function double(value: number): number {\n  return add(value, value)\n}\n\nexport const total = add(1, double(2))\n",
  'notes.rb': 'puts 1\n',
}

/** A fresh copy of the fixture project in a real temporary directory. */
export async function project(files: Record<string, string> = fixture): Promise<string> {
  const dir = await realpath(await mkdtemp(join(tmpdir(), 'cordage-lsp-')))
  temps.push(dir)
  for (const [path, content] of Object.entries(files)) {
    await mkdir(join(dir, path, '..'), { recursive: true })
    await writeFile(join(dir, path), content)
  }
  return dir
}

/** 1-based line and character of the `occurrence`-th `needle` in `text`. */
export function cursor(text: string, needle: string, occurrence = 1): { line: number; character: number } {
  let index = -1
  for (let i = 0; i < occurrence; i++) index = text.indexOf(needle, index + 1)
  if (index < 0) throw new Error(`${needle} not found`)
  const before = text.slice(0, index).split('\n')
  return { line: before.length, character: before.at(-1)!.length + 1 }
}

/** Loads the lsp plugin (TypeScript server configured) rooted at `root`. */
export async function loadLsp(root: string, config: Partial<lsp.Config> = {}, options: { print?: boolean } = {}) {
  const ctx = await createTestContext(options)
  const fiber = await ctx.plugin(lsp, { root, servers: [typescriptServer], ...config })
  const call = (args: unknown, signal?: AbortSignal) => ctx.tools.execute({ name: 'lsp', arguments: args, signal })
  return { ctx, fiber, call }
}

/** Pids of live processes in process group `group` (Linux /proc). */
export function groupMembers(group: number): number[] {
  const members: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      // Fields after the parenthesised command: state ppid pgrp …
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      if (Number(pgrp) === group && state !== 'Z') members.push(Number(entry))
    } catch {
      // Exited while listing.
    }
  }
  return members
}

/** Children of this test process whose command line mentions `marker` (default: typescript-language-server). */
export function languageServers(marker = 'typescript-language-server'): number[] {
  const found: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      if (Number(ppid) !== process.pid || state === 'Z') continue
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(marker)) found.push(Number(entry))
    } catch {
      // Exited while listing.
    }
  }
  return found
}

export { codeOf, textOf, valueOf } from '@cordage/testing'
