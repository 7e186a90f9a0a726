// A worker for channel.test.ts: answers each doorbell ring with `{ seq }`, through the mailbox when
// the host spins for it, else posted.
// oxlint-disable unicorn/require-post-message-target-origin -- a worker's parent port, not a window
import { parentPort, workerData } from 'node:worker_threads'
import { DOORBELL, handMail } from '../src/channel.js'

const { controlBuffer, upBuffer, count } = workerData
const control = new Int32Array(controlBuffer)
const up = new Uint8Array(upBuffer)
let handed = 0
for (let seq = 0; seq < count; seq++) {
  // Poll rather than sleep, so the answer time is ours to vary: around the host's spin windows, so both
  // paths and the races between them occur.
  while (Atomics.load(control, DOORBELL) === seq);
  const until = performance.now() + (seq % 13) / 1000
  while (performance.now() < until);
  if (handMail(control, up, { seq })) handed++
  else parentPort.postMessage({ seq })
}
parentPort.postMessage({ handed })
