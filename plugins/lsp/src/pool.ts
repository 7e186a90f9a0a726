import { statSync, type Stats } from 'node:fs'
import picomatch from 'picomatch'
import { LspError } from './errors.js'
import { LanguageServer, type OpenDocument, type ServerOptions, type ServerSpec } from './server.js'
import { readSource, type SourceFile } from './workspace.js'

/** Limits of the documents the pool sends to servers. */
export interface PoolOptions extends ServerOptions {
  maxFileBytes: number
  maxOpenDocuments: number
  shutdownGraceMs: number
}

interface Entry {
  spec: ServerSpec
  match: (path: string) => boolean
  server?: LanguageServer
  starting?: Promise<LanguageServer>
  /** Calls on one server run one at a time, so document versions and requests stay in order. */
  queue: Promise<unknown>
}

/** Lazily started language servers, one per configured spec, restarted after a crash and shut down on dispose. */
export class ServerPool {
  private readonly entries: Entry[]
  private disposed = false
  private readonly killAll = () => {
    for (const entry of this.entries) entry.server?.kill()
  }

  constructor(
    specs: ServerSpec[],
    private readonly options: PoolOptions,
  ) {
    this.entries = specs.map((spec) => ({ spec, match: picomatch(spec.globs, { dot: true }), queue: Promise.resolve() }))
    // Servers run in their own process groups, so they would outlive an agent that exits without unloading.
    process.on('exit', this.killAll)
  }

  /** The spec whose globs match a root-relative path. */
  specFor(display: string): ServerSpec | undefined {
    return this.entries.find((entry) => entry.match(display))?.spec
  }

  /** The live server of a spec, if one is running (for tests and status). */
  running(name: string): LanguageServer | undefined {
    const server = this.entries.find((entry) => entry.spec.name === name)?.server
    return server && !server.dead ? server : undefined
  }

  /** Runs `fn` against the spec's server (started if needed), serialised; a crash mid-call restarts it and retries once. */
  run<T>(spec: ServerSpec, signal: AbortSignal, fn: (server: LanguageServer) => Promise<T>): Promise<T> {
    const entry = this.entries.find((candidate) => candidate.spec === spec)!
    const task = entry.queue.then(async () => {
      for (let attempt = 0; ; attempt++) {
        const server = await this.server(entry)
        try {
          return await fn(server)
        } catch (error) {
          if (attempt > 0 || signal.aborted || !(error instanceof LspError && error.code === 'LSP_SERVER_CRASHED')) throw error
        }
      }
    })
    entry.queue = task.catch(() => undefined)
    return task
  }

  private async server(entry: Entry): Promise<LanguageServer> {
    if (this.disposed) throw new LspError('LSP_DISPOSED', 'the lsp plugin was unloaded')
    if (entry.server && !entry.server.dead) return entry.server
    // A dead server's group may still hold children (tsserver): end them before starting again.
    entry.server?.kill()
    entry.server = undefined
    entry.starting ??= LanguageServer.start(entry.spec, this.options).finally(() => {
      entry.starting = undefined
    })
    const server = await entry.starting
    if (this.disposed) {
      server.kill()
      throw new LspError('LSP_DISPOSED', 'the lsp plugin was unloaded')
    }
    entry.server = server
    return server
  }

  /** Opens `file` with `text` on the server or sends the new text; other open documents changed on disk are resynced. */
  async sync(server: LanguageServer, file: SourceFile, text: string): Promise<OpenDocument> {
    for (const [uri, document] of server.documents) {
      if (uri === file.uri) continue
      const now = statOf(document.real)
      if (now && now.mtimeMs === document.mtimeMs && now.size === document.size) continue
      const changed = { real: document.real, display: document.real, uri, size: now?.size ?? 0, mtimeMs: now?.mtimeMs ?? 0 }
      const text = now ? await readSource(changed, this.options.maxFileBytes).catch(() => undefined) : undefined
      if (text !== undefined) {
        await this.send(server, changed, text)
      } else {
        // Deleted, grown past the limit or unreadable: the server forgets it rather than keep a stale copy.
        server.documents.delete(uri)
        server.lastSentSeq = server.publishSeq
        await server.notify('textDocument/didClose', { textDocument: { uri } })
      }
    }
    return this.send(server, file, text)
  }

  private async send(server: LanguageServer, file: SourceFile, text: string): Promise<OpenDocument> {
    const uri = file.uri
    const open = server.documents.get(uri)
    if (open && open.text === text) {
      server.documents.delete(uri)
      server.documents.set(uri, { ...open, size: file.size, mtimeMs: file.mtimeMs })
      return server.documents.get(uri)!
    }
    const document: OpenDocument = { real: file.real, version: (open?.version ?? 0) + 1, text, size: file.size, mtimeMs: file.mtimeMs }
    server.documents.delete(uri)
    server.documents.set(uri, document)
    server.lastSentSeq = server.publishSeq
    if (open) await server.notify('textDocument/didChange', { textDocument: { uri, version: document.version }, contentChanges: [{ text }] })
    else await server.notify('textDocument/didOpen', { textDocument: { uri, languageId: server.spec.languageId, version: document.version, text } })
    if (server.documents.size > this.options.maxOpenDocuments) {
      const [oldest] = server.documents.keys()
      server.documents.delete(oldest!)
      await server.notify('textDocument/didClose', { textDocument: { uri: oldest } })
    }
    return document
  }

  /** Shuts every server down (politely, then by signal) and refuses further calls. */
  async dispose(): Promise<void> {
    this.disposed = true
    process.off('exit', this.killAll)
    const starting = this.entries.map((entry) => entry.starting?.catch(() => undefined))
    await Promise.all(starting)
    await Promise.all(this.entries.map((entry) => entry.server?.shutdown(this.options.shutdownGraceMs)))
  }
}

/** The file's stats, or undefined when it is gone or cannot be reached. */
function statOf(path: string): Stats | undefined {
  try {
    return statSync(path, { throwIfNoEntry: false })
  } catch {
    return undefined
  }
}
