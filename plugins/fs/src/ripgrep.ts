import { spawn } from 'node:child_process'
import { FsError } from './errors.js'
import { compileGlob, isHidden, nameGlob } from './glob-match.js'
import { attachContext, clipLine, compareMatches, type ContextLine, type Found, type FoundMatch, type GlobQuery, type GrepQuery } from './search.js'

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

/** Runs rg (no shell) and feeds each stdout line to `onLine`; `onLine` returning false stops rg. */
function run(
  rgPath: string,
  args: string[],
  cwd: string,
  signal: AbortSignal,
  onLine: (line: string) => boolean,
): Promise<{ stopped: boolean; code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason)
    const child = spawn(rgPath, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] })
    let stopped = false
    let rest = ''
    let stderr = ''
    const stop = () => {
      stopped = true
      child.stdout.destroy()
      child.kill('SIGKILL')
    }
    const onAbort = () => stop()
    signal.addEventListener('abort', onAbort, { once: true })
    child.stdout.setEncoding('utf8')
    child.stdout.on('data', (chunk: string) => {
      if (stopped) return
      // Long lines arrive in many chunks: split only once a line is complete.
      if (!chunk.includes('\n')) {
        rest += chunk
        return
      }
      const lines = (rest + chunk).split('\n')
      rest = lines.pop()!
      for (const line of lines) {
        if (line && !onLine(line)) return stop()
      }
    })
    child.stderr.setEncoding('utf8')
    child.stderr.on('data', (chunk: string) => void (stderr.length < 4000 && (stderr += chunk)))
    child.on('error', (error) => {
      signal.removeEventListener('abort', onAbort)
      reject(new FsError('SEARCH_FAILED', `could not run ripgrep: ${error.message}`, { cause: error }))
    })
    child.on('close', (code) => {
      signal.removeEventListener('abort', onAbort)
      if (!stopped && rest) onLine(rest)
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
  const outcome = await run(rgPath, [...COMMON, '--files', ...typeFilter(query.pattern)], query.cwd, query.signal, (line) => {
    // A file type re-includes hidden files whose name matches it; the fallback never lists them.
    if (!matcher.test(line) || isHidden(line)) return true
    if (items.length >= query.max) return !(truncated = true)
    items.push(line)
    return true
  })
  if (!outcome.stopped && outcome.code !== 0 && outcome.code !== 1) throw failed(outcome.code, outcome.stderr, query.pattern)
  return { items: items.sort(), truncated }
}

function text(field: { text?: string; bytes?: string } | undefined): string {
  if (!field) return ''
  return field.text ?? Buffer.from(field.bytes ?? '', 'base64').toString('utf8')
}

/** `rg --json` over a directory or file; JSON messages are parsed as they stream, stopping at `max` matches. */
export async function ripgrepGrep(rgPath: string, query: GrepQuery): Promise<Found<FoundMatch>> {
  const args = [...COMMON, '--json']
  if (query.caseInsensitive) args.push('--ignore-case')
  if (query.context > 0) args.push('--context', String(query.context))
  const matcher = query.glob && !query.file ? compileGlob(query.glob) : undefined
  if (query.glob && matcher) args.push(...typeFilter(query.glob))
  args.push('--regexp', query.pattern)
  if (query.file) args.push('--', query.file)
  const items: FoundMatch[] = []
  let fileMatches: FoundMatch[] = []
  let fileContext: ContextLine[] = []
  let truncated = false
  const flush = () => {
    attachContext(fileMatches, fileContext, query.context)
    fileMatches = []
    fileContext = []
  }
  const outcome = await run(rgPath, args, query.cwd, query.signal, (line) => {
    let message: { type: string; data: any }
    try {
      message = JSON.parse(line)
    } catch {
      return true
    }
    if (message.type === 'match' || message.type === 'context') {
      const lineNumber: number = message.data.line_number
      const content = clipLine(text(message.data.lines).replace(/\r?\n$/, ''), query.maxLineLength)
      if (message.type === 'context') {
        if (!matcher || matcher.test(text(message.data.path))) fileContext.push({ lineNumber, line: content })
      } else {
        const path = text(message.data.path)
        if (matcher && (!matcher.test(path) || isHidden(path))) return true
        if (items.length >= query.max) return !(truncated = true)
        const match = { path, lineNumber, line: content }
        items.push(match)
        fileMatches.push(match)
      }
    } else if (message.type === 'end') flush()
    return true
  })
  flush()
  if (!outcome.stopped && outcome.code !== 0 && outcome.code !== 1 && (items.length === 0 || /regex parse error/.test(outcome.stderr))) {
    throw failed(outcome.code, outcome.stderr, query.pattern)
  }
  return { items: items.sort(compareMatches), truncated }
}
