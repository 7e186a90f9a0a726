import { readdirSync, readFileSync, statSync } from 'node:fs'
import { homedir } from 'node:os'
import { isAbsolute, join, resolve } from 'node:path'
import { parse } from 'yaml'

/** A skill found on disk: its front matter and where it lives (the body is read when it is loaded). */
export interface SkillEntry {
  name: string
  description: string
  allowedTools: string[]
  modelInvocable: boolean
  /** The skill's folder (its resources resolve against it). */
  dir: string
  /** The `SKILL.md` file. */
  file: string
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
    throw new Error(`front matter is not valid YAML: ${(error as Error).message.split('\n')[0]}`, { cause: error })
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

/**
 * Scans the roots in rank order: each `<root>/<folder>/SKILL.md` is one skill; the first root that has
 * a name wins. Missing roots are skipped; unusable files are reported as problems, never thrown.
 */
export function discoverSkills(roots: readonly string[]): { skills: Map<string, SkillEntry>; problems: SkillProblem[] } {
  const skills = new Map<string, SkillEntry>()
  const problems: SkillProblem[] = []
  for (const root of roots) {
    let folders: string[]
    try {
      folders = readdirSync(root).sort()
    } catch {
      continue
    }
    for (const folder of folders) {
      const dir = join(root, folder)
      const file = join(dir, 'SKILL.md')
      let text: string
      try {
        if (!statSync(dir).isDirectory()) continue
        text = readFileSync(file, 'utf8')
      } catch {
        continue
      }
      try {
        const entry = entryOf(parseSkillFile(text).meta, dir, file)
        if (!skills.has(entry.name)) skills.set(entry.name, entry)
      } catch (error) {
        problems.push({ file, message: (error as Error).message })
      }
    }
  }
  return { skills, problems }
}
