import { spawn } from 'node:child_process'
import { FsError } from './errors.js'
import { compileGlob, isHidden, nameGlob } from './glob-match.js'
import { LineSplitter, PathLines, type OutputLine } from './output-lines.js'
import {
  attachContext,
  clipBytes,
  clipLine,
  clippedText,
  compareMatches,
  type ContextLine,
  type Found,
  type FoundMatch,
  type GlobQuery,
  type GrepQuery,
} from './search.js'

/** The ripgrep binary shipped in `@vscode/ripgrep`, or undefined when its platform package is missing. */
export async function findRipgrep(): Promise<string | undefined> {
  try {
    return (await import('@vscode/ripgrep')).rgPath
  } catch {
    return undefined
  }
}

// Ignore files apply in any directory (not only inside a git repository), as the JS fallback does.
const COMMON = ['--no-require-git', '--no-config', '--color', 'never']

// Bytes kept of one output line: room for any path and its line number, then what a clipped line shows.
const PATH_ROOM = 64 << 10

/** What reads rg's stdout: `push` returning false stops rg; `end` takes what is left once it exits. */
interface Output {
  push(chunk: Buffer): boolean
  end(): void
}

/** Runs rg (no shell) and feeds its stdout to `lines`. */
function run(
  rgPath: string,
  args: string[],
  cwd: string,
  signal: AbortSignal,
  lines: Output,
): Promise<{ stopped: boolean; code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason)
    const child = spawn(rgPath, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] })
    let stopped = false
    let stderr = ''
    const stop = () => {
      stopped = true
      child.stdout.destroy()
      child.kill('SIGKILL')
    }
    const onAbort = () => stop()
    signal.addEventListener('abort', onAbort, { once: true })
    child.stdout.on('data', (chunk: Buffer) => {
      if (!stopped && !lines.push(chunk)) stop()
    })
    child.stderr.setEncoding('utf8')
    child.stderr.on('data', (chunk: string) => void (stderr.length < 4000 && (stderr += chunk)))
    child.on('error', (error) => {
      signal.removeEventListener('abort', onAbort)
      reject(new FsError('SEARCH_FAILED', `could not run ripgrep: ${error.message}`, { cause: error }))
    })
    child.on('close', (code) => {
      signal.removeEventListener('abort', onAbort)
      if (!stopped) lines.end()
      if (signal.aborted) reject(signal.reason)
      else resolve({ stopped, code, stderr })
    })
  })
}

function failed(code: number | null, stderr: string, pattern: string): FsError {
  if (/regex parse error|error parsing glob/i.test(stderr)) {
    return new FsError('INVALID_PATTERN', `invalid pattern ${JSON.stringify(pattern)}: ${stderr.trim().split('\n').slice(-3).join(' ')}`)
  }
  return new FsError('SEARCH_FAILED', `ripgrep failed (exit ${code}): ${stderr.trim() || 'no error output'}`)
}

/**
 * Narrows ripgrep to a name glob with a file type: unlike `--glob` (an override that re-includes ignored
 * and hidden files) types respect ignore rules. The JS matcher still decides; this only saves work.
 */
function typeFilter(glob: string): string[] {
  const name = nameGlob(glob)
  return name ? ['--type-add', `cordageglob:${name}`, '--type', 'cordageglob'] : []
}

/**
 * `rg --files` under `cwd` (ignore files and hidden files respected), filtered by the glob in JS: rg's own
 * `--glob` is an override that would re-include ignored files. Stops at `max` paths.
 */
export async function ripgrepGlob(rgPath: string, query: GlobQuery): Promise<Found<string>> {
  const items: string[] = []
  let truncated = false
  const matcher = compileGlob(query.pattern)
  const outcome = await run(
    rgPath,
    [...COMMON, '--files', ...typeFilter(query.pattern)],
    query.cwd,
    query.signal,
    new PathLines((lines) => {
      const found: string[] = []
      for (const line of lines) {
        // A file type re-includes hidden files whose name matches it; the fallback never lists them.
        if (!matcher.test(line) || isHidden(line)) continue
        if (items.length >= query.max) {
          truncated = true
          break
        }
        items.push(line)
        found.push(line)
      }
      if (found.length) query.onItems?.(found)
      return !truncated
    }),
  )
  if (!outcome.stopped && outcome.code !== 0 && outcome.code !== 1) throw failed(outcome.code, outcome.stderr, query.pattern)
  return { items: items.sort(), truncated }
}

/**
 * One line of `rg --null` output: `path NUL number (':' match | '-' context) text`, its text decoded only
 * as far as a clipped line shows. `partialPath` is what came before on earlier lines: a path is the only
 * part that may hold a newline.
 */
function parseRecord(output: OutputLine, partialPath: string, maxLineLength: number): { path: string; match: boolean; line: ContextLine } | undefined {
  const { head } = output
  const nul = head.indexOf(0)
  let at = nul + 1
  while (at < head.length && head[at]! >= 48 && head[at]! <= 57) at++
  if (at === nul + 1 || (head[at] !== 58 && head[at] !== 45)) return undefined
  const start = at + 1
  const bytes = output.length - start - (output.last === 13 ? 1 : 0)
  const text = clippedText(head, start, Math.min(head.length, start + bytes), maxLineLength)
  return {
    path: partialPath + head.toString('utf8', 0, nul),
    match: head[at] === 58,
    line: { lineNumber: Number(head.toString('latin1', nul + 1, at)), line: clipLine(text, maxLineLength, bytes) },
  }
}

/**
 * `rg` over a directory or file in its plain `--null` format (parsed as it streams, stopping at `max`
 * matches): JSON output costs a parse of every match line, minified bundles included, for the same facts.
 */
export async function ripgrepGrep(rgPath: string, query: GrepQuery): Promise<Found<FoundMatch>> {
  const args = [...COMMON, '--no-heading', '--with-filename', '--line-number', '--null', '--no-context-separator']
  if (query.caseInsensitive) args.push('--ignore-case')
  if (query.context > 0) args.push('--context', String(query.context))
  const matcher = query.glob && !query.file ? compileGlob(query.glob) : undefined
  if (query.glob && matcher) args.push(...typeFilter(query.glob))
  args.push('--regexp', query.pattern)
  if (query.file) args.push('--', query.file)
  const items: FoundMatch[] = []
  let fileMatches: FoundMatch[] = []
  let fileContext: ContextLine[] = []
  let filePath: string | undefined
  let truncated = false
  let partialPath = ''
  const flush = () => {
    attachContext(fileMatches, fileContext, query.context)
    if (fileMatches.length) query.onItems?.(fileMatches)
    fileMatches = []
    fileContext = []
  }
  const splitter = new LineSplitter(PATH_ROOM + clipBytes(query.maxLineLength), (output) => {
    if (!output.head.includes(0)) {
      // A path with a newline in it (or a notice such as "binary file matches", which has no NUL).
      partialPath += `${output.head.toString('utf8')}\n`
      return true
    }
    const record = parseRecord(output, partialPath, query.maxLineLength)
    partialPath = ''
    if (!record) return true
    if (record.path !== filePath) {
      flush()
      filePath = record.path
    }
    if (matcher && (!matcher.test(record.path) || isHidden(record.path))) return true
    if (!record.match) {
      fileContext.push(record.line)
      return true
    }
    if (items.length >= query.max) return !(truncated = true)
    const match = { path: record.path, ...record.line }
    items.push(match)
    fileMatches.push(match)
    return true
  })
  const outcome = await run(rgPath, args, query.cwd, query.signal, splitter)
  flush()
  if (!outcome.stopped && outcome.code !== 0 && outcome.code !== 1 && (items.length === 0 || /regex parse error/.test(outcome.stderr))) {
    throw failed(outcome.code, outcome.stderr, query.pattern)
  }
  return { items: items.sort(compareMatches), truncated }
}
