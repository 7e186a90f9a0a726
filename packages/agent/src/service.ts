import { Context, Service } from 'cordis'
import Schema from 'schemastery'
import { CordageError } from '@cordage/core'
import { Agent } from './agent.js'
import type { AgentOptions } from './agent-types.js'
import type { CompactionOptions } from './compactor.js'
import { SessionLog, resolveSessionFile } from './session-log.js'

export declare namespace AgentService {
  interface Config {
    system?: string
    maxTurns: number
    /** Sessions directory (relative to `cwd`); default `.cordage/sessions`. */
    sessionDir?: string
    persist: boolean
    cwd?: string
    compaction?: CompactionOptions
  }
}

/** Options of `ctx.agent.create`: agent options plus where (and whether) to persist the session. */
export interface CreateAgentOptions extends Omit<AgentOptions, 'session'> {
  /** `false` keeps the conversation in memory; default: the plugin's `persist`. */
  persist?: boolean
  /** A session id for a new session. */
  id?: string
}

/** The `agent` service: makes agents with the configured defaults, persisted to session files. */
export class AgentService extends Service {
  static readonly inject = ['tools']
  static readonly Config: Schema<Partial<AgentService.Config>, AgentService.Config> = Schema.object({
    system: Schema.string().description('System prompt of new conversations.'),
    maxTurns: Schema.natural().min(1).default(50).description('Model requests per run before stopping with max-turns.'),
    sessionDir: Schema.string().description('Sessions directory, relative to cwd (default .cordage/sessions).'),
    persist: Schema.boolean().default(true).description('Write a session file per conversation.'),
    cwd: Schema.string().description('Working directory recorded in sessions (default: process.cwd()).'),
    compaction: Schema.object({
      auto: Schema.boolean().description('Compact on reaching the threshold (default true).'),
      threshold: Schema.number().min(0.1).max(0.99).description("Share of the model's window that triggers a compaction (default 0.8)."),
      contextWindow: Schema.natural().min(1).description("The window in tokens (default: the model's info)."),
      keepTokens: Schema.natural().description('Recent messages kept verbatim, in tokens (default a fifth of the window).'),
      clearAbove: Schema.natural().description('Kept tool results above this many tokens are cleared (default 1000).'),
    }).description('When and how conversations are compacted.'),
  })

  // The plugin's own context: `this.ctx` is the caller's when reached through `ctx.agent`, and agents
  // share their run observers per context, so they are all made with this one.
  private readonly home: Context
  // Sessions this service opened that may still be open: unloading closes them, so no descriptor outlives it.
  private readonly sessions = new Set<SessionLog>()
  // Unloading aborts the runs of every agent made here and waits for them before closing their sessions.
  private readonly lifetime = new AbortController()
  private readonly agents = new Set<WeakRef<Agent>>()

  constructor(
    ctx: Context,
    private readonly config: AgentService.Config,
  ) {
    super(ctx, 'agent')
    this.home = ctx
    const { sessions, agents, lifetime } = this
    ctx.effect(
      () => async () => {
        lifetime.abort(new CordageError('ABORTED', 'the agent plugin was unloaded'))
        await Promise.allSettled([...agents].map((ref) => ref.deref()?.whenIdle()))
        agents.clear()
        await Promise.allSettled([...sessions].map((session) => session.close({ reason: 'unloaded' })))
        sessions.clear()
      },
      'agent sessions',
    )
  }

  private lifetimeOf(signal: AbortSignal | undefined): AbortSignal {
    return signal ? AbortSignal.any([signal, this.lifetime.signal]) : this.lifetime.signal
  }

  private adopt(agent: Agent): Agent {
    for (const ref of this.agents) if (!ref.deref()) this.agents.delete(ref)
    this.agents.add(new WeakRef(agent))
    return agent
  }

  private track(session: SessionLog): SessionLog {
    for (const old of this.sessions) if (old.closed) this.sessions.delete(old)
    this.sessions.add(session)
    return session
  }

  /** A new agent (and session file, unless `persist` is false) with the configured defaults. */
  create(options: CreateAgentOptions = {}): Agent {
    const { persist = this.config.persist, id, ...rest } = options
    const model = rest.model ?? this.home.get('model')
    const store = this.home.get('sessions')
    const where = { cwd: this.config.cwd, id, model: model?.id }
    const session = persist ? this.track(store ? SessionLog.createIn(store, where) : SessionLog.create({ ...where, dir: this.config.sessionDir })) : undefined
    return this.adopt(
      new Agent(this.home, {
        system: this.config.system,
        maxTurns: this.config.maxTurns,
        ...(this.config.compaction && { compaction: this.config.compaction }),
        ...rest,
        ...(session && { session }),
        signal: this.lifetimeOf(rest.signal),
      }),
    )
  }

  /** An agent continuing session file `idOrPath` (repaired as `SessionLog.open` describes). */
  resume(idOrPath: string, options: Omit<AgentOptions, 'session' | 'messages'> = {}): Agent {
    return this.continue(SessionLog.open(resolveSessionFile(idOrPath, { cwd: this.config.cwd, dir: this.config.sessionDir })), options)
  }

  /** An agent continuing session `id` of `ctx.sessions` (the session files when no store is loaded). */
  async resumeStored(id: string, options: Omit<AgentOptions, 'session' | 'messages'> = {}): Promise<Agent> {
    const store = this.home.get('sessions')
    return this.continue(
      store ? await SessionLog.openIn(store, id) : SessionLog.open(resolveSessionFile(id, { cwd: this.config.cwd, dir: this.config.sessionDir })),
      options,
    )
  }

  private continue(opened: SessionLog, options: Omit<AgentOptions, 'session' | 'messages'>): Agent {
    const session = this.track(opened)
    return this.adopt(
      new Agent(this.home, {
        maxTurns: this.config.maxTurns,
        ...(this.config.compaction && { compaction: this.config.compaction }),
        ...options,
        session,
        signal: this.lifetimeOf(options.signal),
      }),
    )
  }
}
