import type { BigIntStats } from 'node:fs'
import type { FileHandle } from 'node:fs/promises'
import Schema from 'schemastery'
import { defineTool, type ToolDefinition } from '@cordage/core'
import { openContained, openedFile } from './contained.js'
import { FsError, fsFailure } from './errors.js'
import { CHUNK, countLines } from './line-index.js'
import { readLines, type LineWindow, type LineWindowOptions } from './lines.js'
import type { FsRuntime } from './runtime.js'

const Parameters = Schema.object({
  path: Schema.string().required().description('File to read, relative to the workspace root (or absolute inside it).'),
  offset: Schema.number().step(1).description('1-based line number to start at (default 1); negative counts back from the end (-100: the last 100 lines).'),
  limit: Schema.natural().min(1).description('Maximum number of lines to return.'),
})

type WindowBounds = Pick<LineWindowOptions, 'limit' | 'maxBytes' | 'maxLineLength' | 'signal'>

const Output = Schema.object({
  path: Schema.string().required(),
  offset: Schema.natural().required(),
  lines: Schema.array(Schema.object({ number: Schema.natural().required(), text: Schema.string().required() })).required(),
  totalLines: Schema.natural().required(),
})

/** Renders lines `cat -n` style with a footer saying how to continue. */
export function renderRead(value: { path: string; offset: number; lines: Array<{ number: number; text: string }>; totalLines: number }): string {
  const { lines, totalLines, path } = value
  if (totalLines === 0) return `(${path} is empty)`
  let out = ''
  for (const line of lines) out += `${String(line.number).padStart(6)}\t${line.text}\n`
  const last = lines.length ? lines[lines.length - 1]!.number : value.offset - 1
  if (last < totalLines) {
    const first = lines.length ? lines[0]!.number : value.offset
    out += `\n(Showing lines ${first}-${last} of ${totalLines} in ${path}. Continue with offset=${last + 1}.)`
  } else out = out.slice(0, -1)
  return out
}

/**
 * The window of lines starting at `requested` (negative: counted back from the end). A small file read
 * forward is streamed once. Otherwise the file's line index (kept for an unchanged file, else counted
 * in one pass that keeps no lines) gives the line count and the chunk the window starts in, and only
 * the window is read from there: paging a large file, or reading its end, does not split it from the start.
 */
async function windowOf(
  runtime: FsRuntime,
  handle: FileHandle,
  real: string,
  stats: BigIntStats,
  requested: number,
  bounds: WindowBounds,
): Promise<{ window: LineWindow; offset: number }> {
  if (requested > 0 && stats.size <= CHUNK) return { window: await readLines(handle, { offset: requested, ...bounds }), offset: requested }
  const countStarted = BigInt(Date.now()) * 1_000_000n
  let index = runtime.lineIndexes.get(real, stats)
  if (!index) {
    index = await countLines(handle, bounds.signal)
    runtime.lineIndexes.remember(real, stats, index, countStarted)
  }
  if (index.binary) return { window: { binary: true }, offset: requested }
  const offset = requested > 0 ? requested : Math.max(1, index.totalLines + requested + 1)
  if (offset > index.totalLines) return { window: { binary: false, lines: [], totalLines: index.totalLines }, offset }
  const window = await readLines(handle, { offset, ...bounds, from: index.startOf(offset), untilWindow: true })
  return { window: window.binary ? window : { ...window, totalLines: index.totalLines }, offset }
}

/** The `read` tool: a bounded, numbered window of a text file, streamed. */
export function readTool(runtime: FsRuntime): ToolDefinition {
  const { settings, workspace, tracker } = runtime
  return defineTool({
    name: 'read',
    description: `Read a text file. Returns numbered lines (at most ${settings.maxReadLines} lines or ${settings.maxReadBytes} bytes per call; lines over ${settings.maxLineLength} characters are cut). Use offset/limit to page through large files. Reading a file is required before write or edit may change it.`,
    parameters: Parameters,
    paths: [{ pointer: '/path', access: 'read' }],
    output: {
      schema: Output,
      render: (_args, value) => [{ type: 'text', text: renderRead(value) }],
    },
    concurrency: 'parallel',
    async execute(args, exec) {
      const target = await workspace.resolve(args.path)
      const requested = args.offset ?? 1
      if (requested === 0)
        throw new FsError('OFFSET_OUT_OF_RANGE', 'offset 0 is not a line: lines are numbered from 1, and a negative offset counts back from the end')
      let window
      let offset
      let stats
      let handle
      try {
        handle = await openContained(workspace, target.real, target.display)
        // Taken before reading: a change during the read makes a later write stale, never silently accepted.
        stats = await handle.stat({ bigint: true })
        if (stats.isDirectory()) throw new FsError('IS_DIRECTORY', `${target.display} is a directory, not a file; use glob to list its files`)
        if (!stats.isFile()) throw new FsError('NOT_FOUND', `${target.display} is not a regular file`)
        runtime.admit(exec, openedFile(handle, target.real, stats), 'read')
        const bounds = {
          limit: Math.min(args.limit ?? settings.maxReadLines, settings.maxReadLines),
          maxBytes: settings.maxReadBytes,
          maxLineLength: settings.maxLineLength,
          signal: exec.signal,
        }
        ;({ window, offset } = await windowOf(runtime, handle, target.real, stats, requested, bounds))
      } catch (error) {
        if (exec.signal.aborted) throw error
        throw fsFailure(error, target.display)
      } finally {
        await handle?.close()
      }
      if (window.binary)
        throw new FsError('BINARY_FILE', `${target.display} is a binary file; read only shows text (use bash with a tool like xxd or file to inspect it)`)
      if (offset > 1 && offset > window.totalLines) {
        throw new FsError(
          'OFFSET_OUT_OF_RANGE',
          `offset ${offset} is past the end of ${target.display}, which has ${window.totalLines} lines; use an offset between 1 and ${Math.max(window.totalLines, 1)}`,
        )
      }
      tracker.remember(target.real, stats)
      return { path: target.display, offset, lines: window.lines, totalLines: window.totalLines }
    },
  })
}
