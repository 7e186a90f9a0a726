import { errorMessage, toJsonValue, type JsonObject, type JsonValue, type ToolExec, type ToolExecutionResult } from '@cordage/core'
import type { PostDecision, PreDecision } from '@cordage/registry'
import type { CodeSession } from '@cordage/services'
import { mergePost, mergePre, type Checked } from './decisions.js'
import type { ListenMode } from './events.js'

// Observer calls in flight per mount; past it, events are dropped (a flood of tools/result must not
// queue without end in front of the mount's sandbox).
const MAX_OBSERVING = 64

/** What a mount's listeners need of its bridge. */
export interface ListenerBridge {
  readonly token: symbol
  readonly session: CodeSession
  invoke(payload: JsonObject, timeoutMs?: number): Promise<Record<string, JsonValue | undefined>>
  warn(message: string): void
}

/** A call's view as mounted code sees it: JSON only. */
export function execView(exec: ToolExec): JsonObject {
  const view: JsonObject = { callId: exec.callId, name: exec.name, arguments: exec.arguments, direct: exec.parent === undefined }
  if (exec.agent !== undefined) view.agent = exec.agent
  return view
}

/**
 * The host-side listeners of one mount: pre/post-execute decisions asked of the sandbox (bounded,
 * checked, merged so they only tighten) and observers given JSON copies of the event's arguments.
 */
export class MountListeners {
  private readonly nexts = new Map<number, () => Promise<JsonValue>>()
  private sequence = 0
  private observing = 0

  constructor(
    private readonly bridge: ListenerBridge,
    private readonly owner: string | undefined,
    private readonly timeoutMs: number,
  ) {}

  /** The host listener for the sandbox's listener `id` on `event`. */
  listener(id: number, event: string, mode: ListenMode): (...args: any[]) => unknown {
    if (mode === 'pre-execute')
      return (exec: ToolExec, next: () => Promise<PreDecision>) => (this.sees(exec) ? this.decide(id, event, [execView(exec)], next, mergePre) : next())
    if (mode === 'post-execute')
      return (exec: ToolExec, result: ToolExecutionResult, next: () => Promise<PostDecision>) =>
        this.sees(exec) ? this.decide(id, event, [execView(exec), toJsonValue(result)], next, mergePost) : next()
    return (...args: unknown[]) => this.observe(id, event, args)
  }

  /** The rest of the chain for a decision in progress (what the sandbox's `next()` reaches). */
  next(invocation: number): (() => Promise<JsonValue>) | undefined {
    return this.nexts.get(invocation)
  }

  /**
   * Whether a listener of this mount hears a call: not the mount's own nested calls (no feedback loop),
   * not `cordis_unmount` or `cordis_inspect` (a mount that denies everything can still be removed), and
   * only its owner's calls when a child owns it.
   */
  private sees(exec: ToolExec): boolean {
    if (exec.parent === this.bridge.token || exec.name === 'cordis_unmount' || exec.name === 'cordis_inspect') return false
    return this.owner === undefined || exec.agent === this.owner
  }

  /**
   * Asks a mounted waterfall listener, bounded by `timeoutMs`. Its `next()` reaches the rest of the
   * chain (called at most once); its answer is checked and merged (decisions.ts). A listener that
   * throws, times out or answers no decision leaves the call to the rest of the chain.
   */
  private async decide<T>(
    id: number,
    event: string,
    args: JsonValue[],
    next: () => Promise<T>,
    merge: (answer: unknown, rest: () => Promise<T>) => Promise<Checked<T>>,
  ): Promise<T> {
    const invocation = ++this.sequence
    let answered: Promise<T> | undefined
    const rest = () => (answered ??= Promise.resolve(next()))
    this.nexts.set(invocation, async () => toJsonValue(await rest()))
    let answer: JsonValue | undefined
    try {
      const reply = await this.bridge.invoke({ kind: 'listen', id, args, invocation }, this.timeoutMs)
      if (typeof reply.threw === 'string') throw new Error(reply.threw)
      answer = reply.decision
    } catch (error) {
      this.bridge.warn(`a ${event} listener failed (${errorMessage(error)}); the rest of the chain decides`)
      return rest()
    } finally {
      this.nexts.delete(invocation)
    }
    const checked = await merge(answer, rest)
    if (checked.ignored !== undefined) this.bridge.warn(`a ${event} listener's answer was ignored: ${checked.ignored}`)
    return checked.decision
  }

  private observe(id: number, event: string, args: unknown[]): void {
    if (this.bridge.session.ended) return
    let json: JsonValue[]
    if (event === 'tools/result') {
      const exec = args[0] as ToolExec
      if (!this.sees(exec)) return
      json = [execView(exec), toJsonValue(args[1])]
    } else {
      try {
        json = args.map((arg) => toJsonValue(arg))
      } catch (error) {
        return this.bridge.warn(`a ${event} listener was not called: the event's arguments are not JSON (${errorMessage(error)})`)
      }
    }
    if (this.observing >= MAX_OBSERVING) return this.bridge.warn(`${event} events were dropped: ${MAX_OBSERVING} calls of its listeners are still running`)
    this.observing++
    this.bridge
      .invoke({ kind: 'listen', id, args: json }, this.timeoutMs)
      .then(
        (reply) => void (typeof reply.threw === 'string' && this.bridge.warn(`a ${event} listener threw: ${reply.threw}`)),
        (error: unknown) => this.bridge.warn(`a ${event} listener failed: ${errorMessage(error)}`),
      )
      .finally(() => this.observing--)
  }
}
