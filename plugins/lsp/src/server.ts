import { spawn, type ChildProcess } from 'node:child_process'
import {
  CancellationTokenSource,
  createMessageConnection,
  StreamMessageReader,
  StreamMessageWriter,
  type Diagnostic,
  type MessageConnection,
  type ServerCapabilities,
} from 'vscode-languageserver-protocol/node'
import { LspError } from './errors.js'
import { DEFAULT_ENV_DENY, envFilter, errorMessage } from '@cordage/core'
import { ProcessTree } from '@cordage/process'

/** One configured language server. */
export interface ServerSpec {
  name: string
  command: string
  args: string[]
  globs: string[]
  languageId: string
  env: Record<string, string>
  initializationOptions?: unknown
}

/** What a server instance needs from its plugin: where it runs and how long it may take. */
export interface ServerOptions {
  root: string
  rootUri: string
  startTimeoutMs: number
  requestTimeoutMs: number
}

interface PublishedDiagnostics {
  items: Diagnostic[]
  /** Publish counter value when these arrived (ordering against document changes). */
  seq: number
  version?: number
  /** When it arrived (ms since the epoch). */
  at: number
}

const STDERR_TAIL = 4000
// Variables that commonly carry credentials never reach the server process.
/** The server's environment: the process's, credentials withheld as for every program a plugin spawns, then `extra`. */
function serverEnv(extra: Record<string, string>): Record<string, string> {
  return envFilter({ allow: ['*'], deny: [...DEFAULT_ENV_DENY], set: extra })(process.env)
}

/** A document the server has open: what it was last sent. */
export interface OpenDocument {
  real: string
  version: number
  text: string
  size: number
  mtimeMs: number
}

/** A running language server: one child process (its own process group) speaking JSON-RPC over stdio. */
export class LanguageServer {
  capabilities: ServerCapabilities = {}
  /** The diagnostics publish counter when a document change was last sent (a change to one file can affect any other). */
  lastSentSeq = 0
  /** Documents opened on this process, least recently used first. */
  readonly documents = new Map<string, OpenDocument>()
  stderrTail = ''
  dead = false
  readonly exited: Promise<void>
  private seq = 0
  private readonly published = new Map<string, PublishedDiagnostics>()
  private readonly waiters = new Set<() => void>()
  private readonly connection: MessageConnection
  private rootUri = ''

  private constructor(
    readonly spec: ServerSpec,
    readonly child: ChildProcess,
    /** The server and everything it started, however it detached (its group, session, descendants, marker). */
    private readonly tree: ProcessTree,
  ) {
    this.connection = createMessageConnection(new StreamMessageReader(child.stdout!), new StreamMessageWriter(child.stdin!), {
      error() {},
      warn() {},
      info() {},
      log() {},
    })
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()))
    child.once('exit', () => this.markDead())
    child.stdin!.on('error', () => this.markDead())
    child.stderr!.setEncoding('utf8').on('data', (text: string) => {
      this.stderrTail = (this.stderrTail + text).slice(-STDERR_TAIL)
    })
    this.connection.onRequest('workspace/configuration', (params: { items: unknown[] }) => params.items.map(() => null))
    this.connection.onRequest('workspace/workspaceFolders', () => [{ uri: this.rootUri, name: 'workspace' }])
    // The client is read-only: a server asking to edit files is refused.
    this.connection.onRequest('workspace/applyEdit', () => ({ applied: false, failureReason: 'the lsp tool is read-only' }))
    this.connection.onRequest(() => null)
    this.connection.onNotification('textDocument/publishDiagnostics', (params: { uri: string; version?: number; diagnostics: Diagnostic[] }) => {
      this.published.set(params.uri, { items: params.diagnostics, seq: ++this.seq, version: params.version, at: Date.now() })
      for (const wake of this.waiters) wake()
    })
    this.connection.onNotification(() => undefined)
    this.connection.onClose(() => this.markDead())
    this.connection.listen()
  }

  /** Spawns and initialises a server; failures are LSP_START_FAILED naming the command and its stderr. */
  static async start(spec: ServerSpec, options: ServerOptions): Promise<LanguageServer> {
    const tree = new ProcessTree()
    const child = spawn(spec.command, spec.args, {
      cwd: options.root,
      env: tree.environment(serverEnv(spec.env)),
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
    })
    if (child.pid !== undefined) tree.adopt(child.pid)
    const spawned = new Promise<void>((resolve, reject) => {
      child.once('spawn', resolve)
      child.once('error', reject)
    })
    try {
      await spawned
    } catch (error) {
      throw new LspError(
        'LSP_START_FAILED',
        `could not start the ${spec.name} language server (${spec.command}): ${errorMessage(error)}; install it or fix the lsp plugin's servers config`,
        { cause: error },
      )
    }
    const server = new LanguageServer(spec, child, tree)
    server.rootUri = options.rootUri
    try {
      const result = (await server.request(
        'initialize',
        {
          processId: process.pid,
          rootUri: options.rootUri,
          rootPath: options.root,
          workspaceFolders: [{ uri: options.rootUri, name: 'workspace' }],
          initializationOptions: spec.initializationOptions ?? {},
          capabilities: {
            general: { positionEncodings: ['utf-16'] },
            textDocument: {
              synchronization: { dynamicRegistration: false, didSave: false, willSave: false },
              definition: { linkSupport: true },
              typeDefinition: { linkSupport: true },
              implementation: { linkSupport: true },
              references: {},
              hover: { contentFormat: ['markdown', 'plaintext'] },
              documentSymbol: { hierarchicalDocumentSymbolSupport: true },
              publishDiagnostics: { versionSupport: true, relatedInformation: false },
            },
            workspace: { workspaceFolders: true, configuration: true, symbol: {}, applyEdit: false },
          },
        },
        undefined,
        options.startTimeoutMs,
      )) as { capabilities?: ServerCapabilities }
      server.capabilities = result?.capabilities ?? {}
      await server.connection.sendNotification('initialized', {})
    } catch (error) {
      server.kill()
      if (error instanceof LspError && error.code === 'LSP_TIMEOUT') throw error
      throw new LspError(
        'LSP_START_FAILED',
        `the ${spec.name} language server failed to initialise: ${errorMessage(error)}${server.stderrTail ? `\nstderr: ${server.stderrTail.slice(-1000)}` : ''}`,
        { cause: error },
      )
    }
    return server
  }

  private markDead(): void {
    if (this.dead) return
    this.dead = true
    this.connection.dispose()
    for (const wake of this.waiters) wake()
  }

  /** Sends a request, cancelled (`$/cancelRequest`) when `signal` aborts or `timeoutMs` passes. */
  async request(method: string, params: unknown, signal: AbortSignal | undefined, timeoutMs: number): Promise<unknown> {
    if (this.dead) throw this.crashed()
    if (signal?.aborted) throw signal.reason
    const source = new CancellationTokenSource()
    let timedOut = false
    const timer = setTimeout(() => {
      timedOut = true
      source.cancel()
    }, timeoutMs)
    const onAbort = () => source.cancel()
    signal?.addEventListener('abort', onAbort, { once: true })
    try {
      // A dead server's requests are rejected by the connection's disposal (markDead).
      const result = await this.connection.sendRequest(method, params, source.token)
      // A server may answer a cancelled request (often with null): that answer is not the result.
      if (signal?.aborted) throw signal.reason
      if (timedOut) throw this.timeout(method, timeoutMs)
      return result
    } catch (error) {
      if (signal?.aborted) throw signal.reason
      if (timedOut) throw this.timeout(method, timeoutMs)
      if (this.dead) {
        // The pipes close a moment before the exit status is known; it makes the message useful.
        await Promise.race([this.exited, new Promise((resolve) => setTimeout(resolve, 500))])
        throw this.crashed()
      }
      if (error instanceof LspError) throw error
      throw new LspError('LSP_REQUEST_FAILED', `the ${this.spec.name} language server failed ${method}: ${errorMessage(error)}`, { cause: error })
    } finally {
      clearTimeout(timer)
      signal?.removeEventListener('abort', onAbort)
      source.dispose()
    }
  }

  /** Sends a notification (document sync). */
  notify(method: string, params: unknown): Promise<void> {
    if (this.dead) throw this.crashed()
    return this.connection.sendNotification(method, params)
  }

  /** The publish counter now: diagnostics published later than this reflect what was sent before. */
  get publishSeq(): number {
    return this.seq
  }

  /** The last diagnostics published for `uri`, however old. */
  lastDiagnostics(uri: string): Diagnostic[] | undefined {
    return this.published.get(uri)?.items
  }

  /** Resolves after a publish (any file), the timeout, the signal, or the server's death. */
  private nextPublish(timeoutMs: number, signal: AbortSignal): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer)
        this.waiters.delete(done)
        signal.removeEventListener('abort', done)
        resolve()
      }
      const timer = setTimeout(done, Math.max(0, timeoutMs))
      this.waiters.add(done)
      signal.addEventListener('abort', done, { once: true })
    })
  }

  /**
   * Diagnostics of `uri` as of the text sent at publish counter `afterSeq`: waits up to `waitMs` for a newer
   * publish, then until none has come for `settleMs` — servers publish in stages (syntax first, types later)
   * and say neither which stage is last nor, often, which version a publish is for. Undefined when nothing
   * newer arrived in time.
   */
  async diagnostics(
    uri: string,
    afterSeq: number,
    version: number,
    options: { waitMs: number; settleMs: number; signal: AbortSignal },
  ): Promise<Diagnostic[] | undefined> {
    const { waitMs, settleMs, signal } = options
    const fresh = () => {
      const entry = this.published.get(uri)
      return entry && entry.seq > afterSeq && (entry.version === undefined || entry.version >= version) ? entry : undefined
    }
    const deadline = Date.now() + waitMs
    while (!fresh() && !this.dead && !signal.aborted && Date.now() < deadline) await this.nextPublish(deadline - Date.now(), signal)
    for (let entry = fresh(); entry && !this.dead && !signal.aborted;) {
      const quietFor = Date.now() - entry.at
      if (quietFor >= settleMs || Date.now() >= deadline) break
      await this.nextPublish(Math.min(settleMs - quietFor, deadline - Date.now()), signal)
      entry = fresh()
    }
    return fresh()?.items
  }

  private timeout(method: string, timeoutMs: number): LspError {
    return new LspError(
      'LSP_TIMEOUT',
      `the ${this.spec.name} language server did not answer ${method} within ${timeoutMs} ms; it may still be indexing, try again shortly`,
    )
  }

  private crashed(): LspError {
    const status =
      this.child.exitCode !== null ? `exit code ${this.child.exitCode}` : this.child.signalCode ? `signal ${this.child.signalCode}` : 'closed its pipes'
    return new LspError(
      'LSP_SERVER_CRASHED',
      `the ${this.spec.name} language server stopped (${status}); the next call starts it again${this.stderrTail ? `\nstderr: ${this.stderrTail.slice(-1000)}` : ''}`,
    )
  }

  /** Kills the server and everything it started (tsserver, daemons that left with `setsid`), synchronously. */
  kill(): void {
    this.markDead()
    this.tree.killNow()
  }

  /** Polite shutdown (`shutdown`, `exit`), then SIGTERM and SIGKILL to the process group if it lingers. */
  async shutdown(graceMs: number): Promise<void> {
    if (!this.dead) {
      try {
        await this.request('shutdown', null, undefined, graceMs)
        await this.notify('exit', null)
      } catch {
        // Unresponsive: the signals below end it.
      }
    }
    let timer: NodeJS.Timeout | undefined
    await Promise.race([this.exited, new Promise((resolve) => (timer = setTimeout(resolve, graceMs)))])
    clearTimeout(timer)
    // What the server started is ended too, even when the server exited politely: SIGTERM, SIGKILL after 1 s.
    this.markDead()
    // Once none is left, the server's exit is reaped at once; a member that survived SIGKILL is not waited for.
    if (await this.tree.terminate({ graceMs: 1000 })) await this.exited
  }
}
