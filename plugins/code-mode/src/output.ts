import type { SandboxLimits } from './budget.js'

/**
 * The logs of the current run live in shared memory, written by the worker as the program logs, so
 * the host still has them after terminating a worker mid-run. Layout: an `Int32` count of bytes used
 * after the 4-byte header, then entries of a big-endian `Uint32` byte length and the line's UTF-8.
 * The worker counts each line as its bytes + 1 against `maxOutputBytes` (and cuts the last line at the
 * cap, adding `…`), so `5 × maxOutputBytes` plus a little always holds every entry.
 */
export function createLogBuffer(limits: SandboxLimits): SharedArrayBuffer {
  return new SharedArrayBuffer(4 + 5 * limits.maxOutputBytes + 64)
}

/** Empties the buffer before a run (the worker is idle then). */
export function resetLogs(buffer: SharedArrayBuffer): void {
  Atomics.store(new Int32Array(buffer, 0, 1), 0, 0)
}

/** The lines written so far. */
export function readLogs(buffer: SharedArrayBuffer): string[] {
  const used = Atomics.load(new Int32Array(buffer, 0, 1), 0)
  const view = new DataView(buffer, 4)
  const bytes = new Uint8Array(buffer, 4)
  const decoder = new TextDecoder()
  const lines: string[] = []
  for (let at = 0; at + 4 <= used;) {
    const length = view.getUint32(at)
    // TextDecoder refuses views of shared memory: copy each line out first.
    lines.push(decoder.decode(bytes.slice(at + 4, at + 4 + length)))
    at += 4 + length
  }
  return lines
}
