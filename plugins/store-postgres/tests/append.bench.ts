import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { bench } from 'vitest'
import { JsonlSessionStore } from '@cordage/agent'
import { compare, sessionHeader } from '@cordage/testing'
import type { SessionStore, StoredEvent } from '@cordage/services'
import { PostgresSessionStore } from '../src/store.js'

// Append throughput of the same events, batched as the agent batches them (one append per turn: an
// assistant message with a tool call and its result), PostgreSQL against the JSONL files (target ≤ 2×).
// Both stores make each batch durable before the append resolves (fsync; a committed transaction).
const once = { iterations: 1, warmupIterations: 0, time: 0, warmupTime: 0 }

function turn(seq: number): StoredEvent[] {
  const time = new Date().toISOString()
  return [
    {
      type: 'assistant/message',
      seq,
      time,
      data: { content: 'Reading the file to see what the test expects.', toolCalls: [{ id: `call_${seq}`, name: 'read', arguments: '{"path":"src/a.js"}' }] },
    },
    {
      type: 'tool/result',
      seq: seq + 1,
      time,
      data: { callId: `call_${seq}`, name: 'read', content: [{ type: 'text', text: 'x'.repeat(600) }], isError: false },
    },
  ]
}

/** Appends one turn to a fresh session per 200 turns (sessions of a realistic length). */
function appender(store: SessionStore, prefix: string): () => Promise<void> {
  let session = 0
  let seq = 0
  let id = ''
  return async () => {
    if (seq === 0 || seq > 400) {
      id = `${prefix}-${process.pid}-${session++}`
      await store.create(sessionHeader({ id }))
      seq = 1
    }
    await store.append(id, turn(seq))
    seq += 2
  }
}

bench(
  'PostgreSQL vs JSONL append, one batch per turn',
  async () => {
    const url = process.env.CORDAGE_TEST_POSTGRES_URL
    if (!url) {
      console.log('  skipped: set CORDAGE_TEST_POSTGRES_URL (eval "$(bash scripts/services.sh start)")')
      return
    }
    const dir = mkdtempSync(join(tmpdir(), 'append-bench-'))
    const jsonl = new JsonlSessionStore({ cwd: dir })
    const postgres = new PostgresSessionStore({ url })
    await postgres.open()
    try {
      const stamp = Date.now().toString(36)
      const result = await compare(
        'append one turn (2 events)',
        { name: 'JSONL files (write + fsync)', fn: appender(jsonl, `j${stamp}`) },
        [{ name: 'PostgreSQL (one transaction)', fn: appender(postgres, `p${stamp}`) }],
        { iterations: 50, rounds: 11, warmup: 20, unit: 'ms' },
      )
      const ratio = result['PostgreSQL (one transaction)'] / result['JSONL files (write + fsync)']
      console.log(`  PostgreSQL / JSONL time per turn ${ratio.toFixed(2)}× (target ≤ 2×)`)
    } finally {
      await postgres.close()
      rmSync(dir, { recursive: true, force: true })
    }
  },
  once,
)
