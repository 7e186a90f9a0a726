import { readFile } from 'node:fs/promises'
import { dirname, join, sep } from 'node:path'
import { glob } from 'tinyglobby'
import { FsError } from './errors.js'
import { compileGlob } from './glob-match.js'
import { attachContext, clipLine, compareMatches, type ContextLine, type Found, type FoundMatch, type GlobQuery, type GrepQuery } from './search.js'
import { errorMessage } from '@cordage/core'

/** Converts .gitignore lines found in directory `base` (relative to the search root, '' for itself) to ignore globs. Negations are skipped. */
export function gitignoreGlobs(source: string, base: string): string[] {
  const prefix = base ? `${base}/` : ''
  const globs: string[] = []
  for (const raw of source.split(/\r?\n/)) {
    let line = raw.replace(/(?<!\\)\s+$/, '')
    if (!line || line.startsWith('#') || line.startsWith('!')) continue
    const directoryOnly = line.endsWith('/')
    if (directoryOnly) line = line.slice(0, -1)
    const anchored = line.includes('/')
    if (line.startsWith('/')) line = line.slice(1)
    const path = `${prefix}${anchored ? '' : '**/'}${line}`
    if (!directoryOnly) globs.push(path)
    globs.push(`${path}/**`)
  }
  return globs
}

/** Ignore globs from every .gitignore at or below `cwd`, plus the name-only rules of .gitignore files between `root` and `realCwd` (the real path of `cwd`). */
async function ignoreGlobs(root: string, cwd: string, realCwd: string, signal: AbortSignal): Promise<string[]> {
  const globs: string[] = []
  for (let dir = realCwd; dir !== root && dir.startsWith(root);) {
    dir = dirname(dir)
    const source = await readFile(join(dir, '.gitignore'), 'utf8').catch(() => '')
    // Anchored rules of an ancestor rarely apply below it; only name rules (no slash) are kept.
    globs.push(...gitignoreGlobs(source, '').filter((glob) => glob.startsWith('**/')))
  }
  const files = await glob('**/.gitignore', { cwd, dot: true, followSymbolicLinks: false, ignore: [...globs, '**/.git/**'], signal })
  for (const file of files.sort((a, b) => a.length - b.length)) {
    const source = await readFile(join(cwd, file), 'utf8').catch(() => '')
    const base = dirname(file)
    globs.push(...gitignoreGlobs(source, base === '.' ? '' : base))
  }
  return globs
}

/** Lists files under `cwd` matching `pattern` (see `compileGlob`) with tinyglobby, skipping hidden and ignored files and symlinks. */
async function listFiles(root: string, query: GlobQuery | GrepQuery, pattern: string | undefined): Promise<string[]> {
  const { cwd, signal } = query
  const ignore = await ignoreGlobs(root, cwd, query.realCwd, signal)
  let files = await glob('**/*', { cwd, dot: false, followSymbolicLinks: false, onlyFiles: true, ignore, signal, expandDirectories: false })
  if (sep !== '/') files = files.map((file) => file.split(sep).join('/'))
  if (pattern === undefined) return files
  const matcher = compileGlob(pattern)
  return files.filter((file) => matcher.test(file))
}

/** The pure-JS `glob`: the whole list is acquired (tinyglobby has no early stop), then capped. */
export async function nodeGlob(root: string, query: GlobQuery): Promise<Found<string>> {
  const files = (await listFiles(root, query, query.pattern)).sort()
  const items = files.slice(0, query.max)
  query.onItems?.(items)
  return { items, truncated: files.length > query.max }
}

function compile(pattern: string, caseInsensitive: boolean): RegExp {
  try {
    return new RegExp(pattern, caseInsensitive ? 'i' : '')
  } catch (error) {
    throw new FsError('INVALID_PATTERN', `invalid pattern ${JSON.stringify(pattern)}: ${errorMessage(error)}`)
  }
}

/** The pure-JS `grep`: JavaScript regular expressions, line by line, files with a NUL byte skipped as binary. */
export async function nodeGrep(root: string, query: GrepQuery): Promise<Found<FoundMatch>> {
  const regex = compile(query.pattern, query.caseInsensitive)
  const files = query.file ? [query.file] : (await listFiles(root, query, query.glob)).sort()
  const items: FoundMatch[] = []
  const read = (file: string) => readFile(query.file ? file : join(query.cwd, file)).catch(() => undefined)
  // Reads run one batch ahead of the scan; files are still scanned in path order.
  let batch = files.slice(0, 32).map(read)
  for (let start = 0; start < files.length; start += 32) {
    if (query.signal.aborted) throw query.signal.reason
    const contents = await Promise.all(batch)
    batch = files.slice(start + 32, start + 64).map(read)
    for (let offset = 0; offset < contents.length; offset++) {
      const data = contents[offset]
      if (!data || data.subarray(0, 65536).includes(0)) continue
      if (!scan(files[start + offset]!, data, regex, query, items)) return { items: items.sort(compareMatches), truncated: true }
    }
  }
  return { items: items.sort(compareMatches), truncated: false }
}

/** Appends the matches of one file (with context, as ripgrep reports it); false when the cap stopped it. */
function scan(file: string, data: Buffer, regex: RegExp, query: GrepQuery, items: FoundMatch[]): boolean {
  const lines = data.toString('utf8').split('\n')
  if (lines[lines.length - 1] === '') lines.pop()
  // Where each line starts in the bytes (a clipped line states its length in bytes, as ripgrep's output gives it).
  let starts: number[] | undefined
  const bytesOf = (index: number, text: string) => {
    if (!starts) {
      starts = [0]
      for (let at = data.indexOf(10); at !== -1; at = data.indexOf(10, at + 1)) starts.push(at + 1)
    }
    const end = index + 1 < starts.length ? starts[index + 1]! - 1 : data.length
    return end - starts[index]! - (data[end - 1] === 13 && text.length < lines[index]!.length ? 1 : 0)
  }
  const line = (index: number) => {
    const text = lines[index]!.endsWith('\r') ? lines[index]!.slice(0, -1) : lines[index]!
    return text.length > query.maxLineLength ? clipLine(text, query.maxLineLength, bytesOf(index, text)) : text
  }
  const matches: FoundMatch[] = []
  const context: ContextLine[] = []
  let lastMatch = -Infinity
  let complete = true
  for (let index = 0; index < lines.length; index++) {
    const raw = lines[index]!.endsWith('\r') ? lines[index]!.slice(0, -1) : lines[index]!
    if (regex.test(raw)) {
      if (items.length >= query.max) {
        complete = false
        break
      }
      // Context lines before this match that the previous match's trailing context did not cover.
      for (let before = Math.max(index - query.context, 0, lastMatch + query.context + 1); before < index; before++) {
        context.push({ lineNumber: before + 1, line: line(before) })
      }
      const match = { path: file, lineNumber: index + 1, line: line(index) }
      items.push(match)
      matches.push(match)
      lastMatch = index
    } else if (index - lastMatch <= query.context) context.push({ lineNumber: index + 1, line: line(index) })
  }
  attachContext(matches, context, query.context)
  if (matches.length) query.onItems?.(matches)
  return complete
}
