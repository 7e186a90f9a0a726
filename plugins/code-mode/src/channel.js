// @ts-check
// The shared-memory part of the host ↔ worker channel (protocol.ts has the messages). Plain
// JavaScript: the worker imports it from src/ and dist/ alike.
//
// Waking a sleeping thread is slow on a virtual machine (the README's Performance), for the waker and
// the woken alike, and every nested tool call is a round trip. So each side first spins briefly for a quick
// answer: the worker on the doorbell, the host on the `HOST` slot. While the host spins, the worker
// hands its reply over in the mailbox instead of posting it; one compare-exchange on `HOST` decides
// which of the two paths carries each reply, so a reply is never lost or delivered twice. Call
// completions travel down in a mailbox too (no message to clone and receive); anything that does
// not fit a mailbox is posted.

/** Control slot the host increments and notifies after each message it queues on the worker's inbox. */
export const DOORBELL = 0
/** Control slot of the mailbox handshake: `HOST_AWAY`, `HOST_SPINNING` or `MAIL_READY`. */
export const HOST = 1
/** Control slot holding the byte length of the reply in the host's mailbox. */
export const UP_LENGTH = 2
/** Control slot holding the byte length of the message in the worker's mailbox; 0 while it is empty. */
export const DOWN_LENGTH = 3
export const CONTROL_SLOTS = 4
/** The host reads its message port: the worker posts. */
export const HOST_AWAY = 0
/** The host spins on `HOST`: the worker may fill the mailbox and swap in `MAIL_READY`. */
export const HOST_SPINNING = 1
/** The mailbox holds a reply; the host takes it. */
export const MAIL_READY = 2
/** Bytes of each mailbox; a longer message is posted. */
export const MAILBOX_BYTES = 64 << 10

/**
 * How long a worker spins for the host's answer, given the host's window (`spinMicros`): four times
 * as long, at most 1 ms. The worker has nothing else to do while its program waits, whereas the host's
 * spin holds up its event loop; and a worker that fell asleep costs the next round trip a wake-up,
 * longer than the host's own spin, which then runs out too.
 * @param {number} hostMicros
 */
export function workerWindow(hostMicros) {
  return Math.max(hostMicros, Math.min(1000, 4 * hostMicros))
}

const encoder = new TextEncoder()
const decoder = new TextDecoder()

/**
 * A bounded busy wait that spins only while the other side answers quickly. Each message says how
 * long its sender worked on the request it answers (`took`, µs: running tools, or running the
 * program); the next wait spins only if that was at most `micros`. Wake-up latency is not counted, so
 * a side that stopped spinning starts again as soon as the other answers quickly; a side whose answers
 * turn slow (a tool that reads a disk, a program that computes between calls) wastes at most one
 * window each time.
 */
export class Spinner {
  /** @param {number} micros 0 never spins */
  constructor(micros) {
    this.micros = micros
    /** How long the other side worked on its last answer (µs). */
    this.took = 0
  }

  /** Whether to spin for the answer now outstanding. */
  engage() {
    return this.micros > 0 && this.took <= this.micros
  }

  /** Spins until `ready()` or the window ends. @param {() => boolean} ready */
  spin(ready) {
    const deadline = performance.now() + this.micros / 1000
    do {
      if (ready()) return true
    } while (performance.now() < deadline)
    return false
  }
}

/**
 * Host side: spins for the worker's reply in the mailbox. Returns it, or `undefined` when the window
 * ran out, in which case the worker posts it instead.
 * @param {Int32Array} control @param {Uint8Array} mailbox @param {Spinner} spinner
 * @returns {any}
 */
export function awaitMail(control, mailbox, spinner) {
  if (!spinner.engage()) return undefined
  Atomics.store(control, HOST, HOST_SPINNING)
  const arrived =
    spinner.spin(() => Atomics.load(control, HOST) === MAIL_READY) || Atomics.compareExchange(control, HOST, HOST_SPINNING, HOST_AWAY) === MAIL_READY
  if (!arrived) return undefined
  Atomics.store(control, HOST, HOST_AWAY)
  return readBox(control, UP_LENGTH, mailbox)
}

/**
 * Worker side: hands `message` to a spinning host through the mailbox. False when the host is not
 * spinning (or stopped meanwhile), or the message does not fit: then the caller posts it.
 * @param {Int32Array} control @param {Uint8Array} mailbox @param {object} message
 */
export function handMail(control, mailbox, message) {
  if (Atomics.load(control, HOST) !== HOST_SPINNING) return false
  return writeBox(control, UP_LENGTH, mailbox, message) && Atomics.compareExchange(control, HOST, HOST_SPINNING, MAIL_READY) === HOST_SPINNING
}

/**
 * Writes `message` as JSON into `box` and its byte length into `slot`; false when it does not fit.
 * The reader learns of it through a later atomic operation (the handshake, or the doorbell).
 * @param {Int32Array} control @param {number} slot @param {Uint8Array} box @param {object} message
 */
export function writeBox(control, slot, box, message) {
  const text = JSON.stringify(message)
  if (text.length > box.length) return false
  const { read, written } = encoder.encodeInto(text, box)
  if (read < text.length) return false
  Atomics.store(control, slot, written)
  return true
}

/**
 * The message `writeBox` left in `box`, or `undefined` when `slot` says it is empty; empties it.
 * @param {Int32Array} control @param {number} slot @param {Uint8Array} box
 * @returns {any}
 */
export function readBox(control, slot, box) {
  const length = Atomics.exchange(control, slot, 0)
  return length === 0 ? undefined : JSON.parse(decoder.decode(box.subarray(0, length)))
}
