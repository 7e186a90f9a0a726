import { randomBytes } from 'node:crypto'
import type { Redis } from 'ioredis'

/**
 * A run's streamed text, from the worker that runs it to whoever follows it (`cordage serve`): not part of
 * the session (the stored turn carries the whole text), so it travels over Redis pub/sub, with the current
 * turn's text so far in a key for a follower that joins mid-turn.
 */

/** One published piece: `text` goes at character `at` of turn `turn` of the writer `epoch` (one per start of the run). */
interface LivePiece {
  epoch: string
  turn: number
  at: number
  text: string
}

/** How long a worker gathers deltas before it publishes them (a model streams a token every few ms). */
const FLUSH_MS = 25
/** The text-so-far key outlives a worker that died mid-turn by this much, then Redis drops it. */
const TEXT_TTL_MS = 10 * 60_000

/** Redis names of run `id`'s live text in queue `name`. */
export function liveKeys(name: string, id: string): { channel: string; text: string } {
  return { channel: `cordage:${name}:live:${id}`, text: `cordage:${name}:turn-text:${id}` }
}

/** The worker's side: what a run streams, gathered for `FLUSH_MS` and published with the text so far. */
export class LiveWriter {
  /** A resumed run's new worker numbers its turns afresh: pieces carry whose numbering they use. */
  private readonly epoch = randomBytes(6).toString('hex')
  private turn = 0
  private text = ''
  private published = 0
  private timer: NodeJS.Timeout | undefined
  private closed = false
  /** Whether the text-so-far key was ever written (a run that streamed nothing costs Redis nothing). */
  private wrote = false

  constructor(
    private readonly redis: Redis,
    private readonly keys: { channel: string; text: string },
    private readonly onError: (error: unknown) => void,
  ) {}

  /** Text the model streamed in the current turn. */
  delta(text: string): void {
    if (this.closed || !text) return
    this.text += text
    this.timer ??= setTimeout(() => this.flush(), FLUSH_MS)
  }

  /** A new turn begins: followers drop the last turn's text (it is stored now). */
  nextTurn(): void {
    if (this.closed) return
    this.flush()
    this.turn++
    this.text = ''
    this.published = 0
  }

  /** Publishes what is left and forgets the run's text. */
  async close(): Promise<void> {
    if (this.closed) return
    this.flush()
    this.closed = true
    if (this.wrote) await this.redis.del(this.keys.text).catch(this.onError)
  }

  private flush(): void {
    clearTimeout(this.timer)
    this.timer = undefined
    if (this.published === this.text.length) return
    const piece: LivePiece = { epoch: this.epoch, turn: this.turn, at: this.published, text: this.text.slice(this.published) }
    this.published = this.text.length
    this.wrote = true
    // In order on one connection: a follower that reads the key after subscribing misses nothing.
    this.redis
      .multi()
      .set(this.keys.text, JSON.stringify({ epoch: this.epoch, turn: this.turn, text: this.text }), 'PX', TEXT_TTL_MS)
      .publish(this.keys.channel, JSON.stringify(piece))
      .exec()
      .catch(this.onError)
  }
}

interface Followed {
  listeners: Set<(text: string, turn: string) => void>
  /** The current turn and its text as delivered so far (a listener that joins gets it first). */
  epoch: string
  turn: number
  text: string
  /** Pieces that arrived before the text so far was read. */
  early: LivePiece[] | undefined
}

/** The following side: one subscriber connection, one channel per followed run, shared by its listeners. */
export class LiveFollower {
  private readonly runs = new Map<string, Followed>()
  private readonly byChannel = new Map<string, string>()

  constructor(
    private readonly subscriber: () => Redis,
    private readonly reader: Redis,
    private readonly name: string,
  ) {}

  /**
   * Calls `listener` with run `id`'s streamed text and the key of its turn (another key: another turn): first the
   * current turn's text so far (if any), then each piece as it comes, each character once. Returns the unsubscribe.
   */
  follow(id: string, listener: (text: string, turn: string) => void): () => void {
    let run = this.runs.get(id)
    if (run) {
      if (run.early === undefined && run.text) listener(run.text, `${run.epoch}.${run.turn}`)
    } else {
      run = { listeners: new Set(), epoch: '', turn: -1, text: '', early: [] }
      this.runs.set(id, run)
      void this.open(id, run)
    }
    run.listeners.add(listener)
    return () => {
      const current = this.runs.get(id)
      if (!current?.listeners.delete(listener) || current.listeners.size) return
      this.runs.delete(id)
      const { channel } = liveKeys(this.name, id)
      this.byChannel.delete(channel)
      this.subscriber()
        .unsubscribe(channel)
        .catch(() => {})
    }
  }

  /** Routes a message of the subscriber connection. */
  message(channel: string, message: string): void {
    const id = this.byChannel.get(channel)
    const run = id === undefined ? undefined : this.runs.get(id)
    if (!run) return
    let piece: LivePiece
    try {
      piece = JSON.parse(message) as LivePiece
    } catch {
      return
    }
    if (typeof piece?.epoch !== 'string' || !Number.isInteger(piece.turn) || !Number.isInteger(piece.at) || typeof piece.text !== 'string') return
    if (run.early) run.early.push(piece)
    else this.deliver(run, piece)
  }

  private async open(id: string, run: Followed): Promise<void> {
    const keys = liveKeys(this.name, id)
    this.byChannel.set(keys.channel, id)
    try {
      await this.subscriber().subscribe(keys.channel)
      // Read after subscribing: whatever the key lacks comes as a message.
      const stored = await this.reader.get(keys.text)
      const sofar = stored ? (JSON.parse(stored) as Partial<LivePiece>) : undefined
      if (this.runs.get(id) !== run) return
      const early = run.early ?? []
      run.early = undefined
      if (typeof sofar?.epoch === 'string' && Number.isInteger(sofar.turn) && typeof sofar.text === 'string')
        this.deliver(run, { epoch: sofar.epoch, turn: sofar.turn!, at: 0, text: sofar.text })
      for (const piece of early) this.deliver(run, piece)
    } catch {
      // No live text (Redis unreachable): followers still get every stored event.
      if (this.runs.get(id) === run) run.early = undefined
    }
  }

  /** Passes on the part of `piece` not delivered yet; a newer turn (or a new worker's) starts over. */
  private deliver(run: Followed, piece: LivePiece): void {
    if (piece.epoch === run.epoch && piece.turn < run.turn) return
    if (piece.epoch !== run.epoch || piece.turn > run.turn) {
      run.epoch = piece.epoch
      run.turn = piece.turn
      run.text = ''
    }
    const end = piece.at + piece.text.length
    if (end <= run.text.length || piece.at > run.text.length) return
    const fresh = piece.text.slice(run.text.length - piece.at)
    run.text += fresh
    for (const listener of run.listeners) listener(fresh, `${run.epoch}.${run.turn}`)
  }
}
