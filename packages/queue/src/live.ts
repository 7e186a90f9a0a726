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
  /** Characters of the current turn published so far, and their UTF-8 length (the key's offset after its header). */
  private at = 0
  private bytes = 0
  private pending = ''
  private timer: NodeJS.Timeout | undefined
  private closed = false
  /** Whether the text-so-far key holds this writer's turn (a run that streamed nothing costs Redis nothing). */
  private wrote = false

  constructor(
    private readonly redis: Redis,
    private readonly keys: { channel: string; text: string },
    private readonly onError: (error: unknown) => void,
  ) {}

  /** Text the model streamed in the current turn. */
  delta(text: string): void {
    if (this.closed || !text) return
    this.pending += text
    this.timer ??= setTimeout(() => this.flush(), FLUSH_MS)
  }

  /**
   * The current turn's text is complete (it is stored now) or a new turn begins: followers, and whoever
   * joins from now on, drop the last turn's text.
   */
  nextTurn(): void {
    if (this.closed) return
    this.flush()
    this.turn++
    const streamed = this.at > 0
    this.at = 0
    this.bytes = 0
    if (!streamed) return
    this.wrote = false
    // An empty piece of the next turn: followers start it afresh without waiting for its first text.
    const piece: LivePiece = { epoch: this.epoch, turn: this.turn, at: 0, text: '' }
    this.redis.multi().del(this.keys.text).publish(this.keys.channel, JSON.stringify(piece)).exec().catch(this.onError)
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
    if (!this.pending) return
    const piece: LivePiece = { epoch: this.epoch, turn: this.turn, at: this.at, text: this.pending }
    const header = `${this.epoch}.${this.turn}\n`
    const write = this.redis.multi()
    // Each piece is written once, at its own offset: a long turn costs Redis its length, and a command sent
    // again after a reconnect writes the same bytes.
    if (this.at === 0) write.set(this.keys.text, header + piece.text, 'PX', TEXT_TTL_MS)
    else write.setrange(this.keys.text, Buffer.byteLength(header) + this.bytes, piece.text).pexpire(this.keys.text, TEXT_TTL_MS)
    this.at += piece.text.length
    this.bytes += Buffer.byteLength(piece.text)
    this.pending = ''
    this.wrote = true
    // In order on one connection: a follower that reads the key after subscribing misses nothing.
    write.publish(this.keys.channel, JSON.stringify(piece)).exec().catch(this.onError)
  }
}

/** The text so far as the key holds it (`<epoch>.<turn>` and a newline, then the text), or undefined. */
function parseSoFar(stored: string | null): LivePiece | undefined {
  const header = stored ? /^(\w+)\.(\d+)\n/.exec(stored) : null
  return header ? { epoch: header[1]!, turn: Number(header[2]), at: 0, text: stored!.slice(header[0].length) } : undefined
}

interface Followed {
  id: string
  listeners: Set<(text: string, turn: string) => void>
  /** The current turn and its text as delivered so far (a listener that joins gets it first). */
  epoch: string
  turn: number
  text: string
  /** Pieces that arrived while the text so far was being read (on joining, or after pieces were missed). */
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
      if (run.text) listener(run.text, `${run.epoch}.${run.turn}`)
    } else {
      run = { id, listeners: new Set(), epoch: '', turn: -1, text: '', early: [] }
      this.runs.set(id, run)
      void this.open(run)
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
    if (typeof piece?.epoch !== 'string' || !Number.isInteger(piece.turn) || !(Number.isInteger(piece.at) && piece.at >= 0) || typeof piece.text !== 'string')
      return
    if (run.early) run.early.push(piece)
    else if (!this.deliver(run, piece)) {
      // Pieces were missed (the connection dropped, pub/sub delivers at most once): the key has them.
      run.early = [piece]
      void this.catchUp(run)
    }
  }

  private async open(run: Followed): Promise<void> {
    const { channel } = liveKeys(this.name, run.id)
    this.byChannel.set(channel, run.id)
    try {
      await this.subscriber().subscribe(channel)
    } catch {
      // No live text (Redis unreachable): followers still get every stored event.
      if (this.runs.get(run.id) === run) run.early = undefined
      return
    }
    // Read after subscribing: whatever the key lacks comes as a message.
    await this.catchUp(run)
  }

  /** Reads the turn's text so far, then passes on what it and the pieces that came meanwhile add. */
  private async catchUp(run: Followed): Promise<void> {
    let sofar: LivePiece | undefined
    try {
      sofar = parseSoFar(await this.reader.get(liveKeys(this.name, run.id).text))
    } catch {
      // Unreadable now: the pieces still come.
    }
    if (this.runs.get(run.id) !== run) return
    const early = run.early ?? []
    run.early = undefined
    if (sofar) this.deliver(run, sofar)
    for (const piece of early) this.deliver(run, piece)
  }

  /**
   * Passes on the part of `piece` not delivered yet; a newer turn (or a new worker's) starts over. False when
   * pieces before it are missing.
   */
  private deliver(run: Followed, piece: LivePiece): boolean {
    if (piece.epoch === run.epoch && piece.turn < run.turn) return true
    if (piece.epoch !== run.epoch || piece.turn > run.turn) {
      run.epoch = piece.epoch
      run.turn = piece.turn
      run.text = ''
    }
    if (piece.at > run.text.length) return false
    const fresh = piece.text.slice(run.text.length - piece.at)
    if (!fresh) return true
    run.text += fresh
    for (const listener of run.listeners) listener(fresh, `${run.epoch}.${run.turn}`)
    return true
  }
}
