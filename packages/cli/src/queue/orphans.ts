import { hostname } from 'node:os'
import { ProcessTree, TREE_VARIABLE, newTreeToken, readProcess } from '@cordage/process'
import type { WorkerIdentity } from '@cordage/queue'
import type { Output } from '../output.js'

/** How long what a dead worker left behind gets between SIGTERM and SIGKILL. */
const ORPHAN_GRACE_MS = 2000

/**
 * This worker process as the next worker to take its runs will see it. Every process it starts from now on
 * (its runs' commands, language and MCP servers) carries its token in `CORDAGE_PROCESS_TREE`, so if it dies
 * a worker on the same machine can find them.
 */
export function claimWorkerIdentity(): WorkerIdentity {
  const token = `w${newTreeToken()}`
  const inherited = process.env[TREE_VARIABLE]
  process.env[TREE_VARIABLE] = inherited ? `${inherited}:${token}` : token
  return { host: hostname(), pid: process.pid, start: readProcess(process.pid)?.start ?? 0, token }
}

/**
 * Ends the processes a dead worker of this machine left behind (a run's command in flight when it was
 * killed, a background job, a language server): nothing else will stop them. A worker that is still alive
 * (merely slow: its lock expired) keeps its processes, and a worker of another machine has none here.
 */
export async function endOrphansOf(previous: WorkerIdentity, self: WorkerIdentity, output: Output): Promise<void> {
  if (previous.host !== self.host || previous.token === self.token) return
  const info = readProcess(previous.pid)
  const alive = info !== undefined && info.state !== 'Z' && (previous.start === 0 || info.start === previous.start)
  if (alive) return
  const orphans = ProcessTree.marked(previous.token)
  const found = orphans.members()?.length ?? 0
  if (!found) return
  output.error(`worker: ending ${found} process${found === 1 ? '' : 'es'} left by worker ${previous.pid}, which died`)
  await orphans.terminate({ graceMs: ORPHAN_GRACE_MS })
}
