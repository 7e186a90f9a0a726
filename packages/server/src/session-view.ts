import type { SessionListFilter, SessionStore, SessionSummary, StoredEvent, StoredSessionParent } from '@cordage/services'
import type { RunLauncher } from './launcher.js'

/** One entry of `GET /api/sessions`. */
export interface SessionInfo {
  id: string
  /** `waiting`: a live run with a pending approval or question, or a queued run stored as waiting for one. */
  status: 'running' | 'waiting' | 'ended'
  createdAt: string
  updatedAt: string
  lastSeq: number
  model?: string
  parent?: StoredSessionParent
  depth?: number
  /** Model requests, from the `run/end` events (plus the turns of a run still going). */
  turns: number
  usage: { inputTokens: number; outputTokens: number }
  /** US dollars, when every priced turn reported one. */
  cost?: number
  /** From creation to the last event, for an ended session. */
  durationMs?: number
  pending: number
}

type Totals = Pick<SessionInfo, 'turns' | 'usage' | 'cost'>

/** Sums what a session's events say about its model requests: `run/end` totals, then the turns after the last one. */
export function totalsOf(events: readonly StoredEvent[]): Totals {
  const totals: Totals = { turns: 0, usage: { inputTokens: 0, outputTokens: 0 } }
  let cost: number | undefined = 0
  let unpriced = false
  const add = (data: { usage?: { inputTokens?: number; outputTokens?: number }; cost?: number }, turns: number) => {
    totals.turns += turns
    totals.usage.inputTokens += data.usage?.inputTokens ?? 0
    totals.usage.outputTokens += data.usage?.outputTokens ?? 0
    if (typeof data.cost === 'number') cost! += data.cost
    else if (data.usage) unpriced = true
  }
  let since: StoredEvent[] = []
  for (const event of events) {
    if (event.type === 'run/end') {
      const data = event.data as { turns?: number; usage?: { inputTokens?: number; outputTokens?: number }; cost?: number }
      add(data, typeof data.turns === 'number' ? data.turns : 0)
      since = []
    } else if (event.type === 'assistant/message') since.push(event)
  }
  for (const event of since) add(event.data as Parameters<typeof add>[0], 1)
  if (!unpriced && cost! > 0) totals.cost = cost
  return totals
}

/**
 * Builds the session list of the API from `ctx.sessions`: the store's summaries, plus totals read from
 * each session's events, cached per session until its last `seq` moves (an ended session is read once).
 */
export class SessionView {
  private readonly cache = new Map<string, { lastSeq: number; totals: Totals }>()

  constructor(
    private readonly store: () => SessionStore,
    private readonly launcher: RunLauncher,
    /** Sessions whose totals are kept (least recently listed dropped first). */
    private readonly cacheSize = 4096,
  ) {}

  async list(filter: SessionListFilter): Promise<SessionInfo[]> {
    const store = this.store()
    const summaries = await store.list(filter)
    return Promise.all(summaries.map((summary) => this.info(store, summary)))
  }

  private async info(store: SessionStore, summary: SessionSummary): Promise<SessionInfo> {
    const { header } = summary
    const totals = await this.totals(store, summary)
    const live = summary.status === 'ended' ? undefined : this.launcher.status(header.id)
    const info: SessionInfo = {
      id: header.id,
      status: summary.status === 'running' && live && live.pending > 0 ? 'waiting' : summary.status,
      createdAt: header.createdAt,
      updatedAt: summary.updatedAt,
      lastSeq: summary.lastSeq,
      ...(header.model !== undefined && { model: header.model }),
      ...(header.parent !== undefined && { parent: header.parent }),
      ...(header.depth !== undefined && { depth: header.depth }),
      ...totals,
      pending: live?.pending ?? (summary.status === 'waiting' ? 1 : 0),
    }
    if (summary.status === 'ended') info.durationMs = Math.max(0, Date.parse(summary.updatedAt) - Date.parse(header.createdAt))
    return info
  }

  private async totals(store: SessionStore, summary: SessionSummary): Promise<Totals> {
    const id = summary.header.id
    const cached = this.cache.get(id)
    if (cached && cached.lastSeq === summary.lastSeq) {
      this.cache.delete(id)
      this.cache.set(id, cached)
      return cached.totals
    }
    let totals: Totals
    try {
      totals = totalsOf((await store.read(id)).events)
    } catch {
      // Deleted or unreadable between list and read: the list still shows it, with no totals.
      return { turns: 0, usage: { inputTokens: 0, outputTokens: 0 } }
    }
    this.cache.delete(id)
    this.cache.set(id, { lastSeq: summary.lastSeq, totals })
    if (this.cache.size > this.cacheSize) this.cache.delete(this.cache.keys().next().value!)
    return totals
  }
}
