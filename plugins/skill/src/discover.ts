import { existsSync, readdirSync, realpathSync, statSync } from 'node:fs'
import { homedir } from 'node:os'
import { isAbsolute, join, resolve } from 'node:path'
import { parse } from 'yaml'
import { insideRoots, readSkillFile, SkillFileError } from './skill-file.js'
import { errorMessage } from '@cordage/core'

/** A skill found on disk: its front matter and where it lives (the body is read when it is loaded). */
export interface SkillEntry {
  name: string
  description: string
  allowedTools: string[]
  modelInvocable: boolean
  /** The skill's folder, its real path (its resources resolve against it). */
  dir: string
  /** The `SKILL.md` file (its real path). */
  file: string
  /** Set when the file is over `maxSkillBytes`: it is not listed, and loading it fails naming the limit. */
  size?: number
}

/** A skill file that could not be used, and why. */
export interface SkillProblem {
  file: string
  message: string
}

/** Kebab-case, as Claude Code names skills. */
export const SKILL_NAME = /^[a-z0-9]+(-[a-z0-9]+)*$/

const FRONT_MATTER = /^---\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/

/** Resolves a configured root: `~/` is the home directory, relative roots resolve against `cwd`. */
export function resolveRoot(root: string, cwd: string): string {
  if (root === '~' || root.startsWith('~/')) return join(homedir(), root.slice(1))
  return isAbsolute(root) ? root : resolve(cwd, root)
}

/** Splits a SKILL.md into its front matter (parsed) and body; throws with a message naming the fault. */
export function parseSkillFile(text: string): { meta: Record<string, unknown>; body: string } {
  const match = FRONT_MATTER.exec(text.replace(/^\uFEFF/, ''))
  if (!match) throw new Error('no YAML front matter (the file must start with a --- line, then name and description, then ---)')
  let meta: unknown
  try {
    meta = parse(match[1]!)
  } catch (error) {
    throw new Error(`front matter is not valid YAML: ${errorMessage(error).split('\n')[0]}`, { cause: error })
  }
  if (typeof meta !== 'object' || meta === null || Array.isArray(meta)) throw new Error('front matter must be a YAML mapping with name and description')
  return { meta: meta as Record<string, unknown>, body: text.replace(/^\uFEFF/, '').slice(match[0].length) }
}

function entryOf(meta: Record<string, unknown>, dir: string, file: string): SkillEntry {
  const { name, description } = meta
  if (typeof name !== 'string' || !SKILL_NAME.test(name))
    throw new Error(`front matter "name" must be a kebab-case string (e.g. deploy-app), got ${JSON.stringify(name)}`)
  if (typeof description !== 'string' || !description.trim()) throw new Error('front matter "description" must be a non-empty string')
  const allowed = meta['allowed-tools']
  const allowedTools = typeof allowed === 'string' ? allowed.split(/[\s,]+/).filter(Boolean) : Array.isArray(allowed) ? allowed.map(String) : []
  if (allowed !== undefined && typeof allowed !== 'string' && !Array.isArray(allowed))
    throw new Error('front matter "allowed-tools" must be a string or a list of tool names')
  return { name, description: description.trim(), allowedTools, modelInvocable: meta['disable-model-invocation'] !== true, dir, file }
}

/** What a scan needs: the size limit, and a callback told of each path before it is read (for invalidation). */
export interface ScanOptions {
  maxSkillBytes: number
  observe?: (path: string) => void
}

/** How much of an oversized SKILL.md is read to find its name (the front matter must lie within it). */
export const HEAD_BYTES = 64 * 1024

/**
 * Scans the roots in rank order: each `<root>/<folder>/SKILL.md` is one skill; the first root that has
 * a name wins. Missing roots are skipped; unusable files are reported as problems, never thrown. A
 * folder or SKILL.md whose real path lies outside every root is refused, and only the front matter of
 * a file over `maxSkillBytes` is read (its entry is kept, marked `size`, so a call can name the limit).
 */
export function discoverSkills(
  roots: readonly string[],
  options: ScanOptions,
): { skills: Map<string, SkillEntry>; problems: SkillProblem[]; realRoots: string[] } {
  const skills = new Map<string, SkillEntry>()
  const problems: SkillProblem[] = []
  const observe = options.observe ?? (() => {})
  const realRoots = roots.flatMap((root) => {
    observe(root)
    try {
      return [realpathSync(root)]
    } catch {
      return []
    }
  })
  for (const root of roots) {
    let folders: string[]
    try {
      folders = readdirSync(root).sort()
    } catch {
      continue
    }
    for (const folder of folders) {
      const link = join(root, folder)
      observe(link)
      let dir: string
      try {
        dir = realpathSync(link)
        if (!statSync(dir).isDirectory()) continue
      } catch {
        continue
      }
      const file = join(dir, 'SKILL.md')
      if (!insideRoots(dir, realRoots)) {
        problems.push({ file: join(link, 'SKILL.md'), message: `the folder resolves to ${dir}, outside the skill roots (${realRoots.join(', ')})` })
        continue
      }
      observe(file)
      try {
        const { text, size } = readSkillFile(file, realRoots, HEAD_BYTES, false)
        const entry = entryOf(parseSkillFile(text).meta, dir, file)
        if (size > options.maxSkillBytes) {
          entry.size = size
          problems.push({ file, message: `${size} bytes, over the limit of ${options.maxSkillBytes} bytes (maxSkillBytes); it is not listed` })
        }
        if (!skills.has(entry.name)) skills.set(entry.name, entry)
      } catch (error) {
        // A folder without a SKILL.md is not a skill; anything else about the file is worth a warning.
        if (error instanceof SkillFileError && error.problem === 'unreadable' && !existsSync(file)) continue
        problems.push({ file, message: errorMessage(error) })
      }
    }
  }
  return { skills, problems, realRoots }
}
