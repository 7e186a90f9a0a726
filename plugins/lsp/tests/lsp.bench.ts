// The lsp tool's overhead per call (registry pipeline, path resolution, re-reading the file, sync check, screening)
// against the same request sent straight over a JSON-RPC connection to an identical server process.
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, bench, describe } from 'vitest'
import { createMessageConnection, StreamMessageReader, StreamMessageWriter } from 'vscode-languageserver-protocol/node'
import { compare } from '@cordage/testing'
import { FAKE_SERVER, fakeServer, loadLsp, project } from './helpers.js'

const root = await project({ 'a.txt': 'one\ntwo\n'.repeat(500) })
const { call, fiber } = await loadLsp(root, {
  servers: [fakeServer('symbols')],
})

// Spawned as the tool spawns its servers (detached: a session and process group of its own). Where the
// scheduler groups processes by session (Linux autogroup), a detached server is scheduled as its own
// group: on a busy machine an attached baseline would be scheduled differently from the server measured.
const child = spawn(process.execPath, [FAKE_SERVER, 'symbols'], { stdio: ['pipe', 'pipe', 'inherit'], detached: true })
const connection = createMessageConnection(new StreamMessageReader(child.stdout), new StreamMessageWriter(child.stdin))
connection.listen()
await connection.sendRequest('initialize', { processId: process.pid, rootUri: pathToFileURL(root).href, capabilities: {} })
const uri = pathToFileURL(join(root, 'a.txt')).href

afterAll(async () => {
  connection.dispose()
  child.kill()
  await fiber.dispose()
})

describe('lsp', () => {
  bench(
    'compare',
    async () => {
      const result = await compare(
        'lsp symbols (150 symbols) vs the same request on a raw JSON-RPC connection',
        {
          name: 'raw documentSymbol request',
          fn: () => connection.sendRequest('textDocument/documentSymbol', { textDocument: { uri } }),
        },
        [{ name: 'lsp tool, operation symbols', fn: () => call({ operation: 'symbols', path: 'a.txt' }) }],
        { iterations: 50, rounds: 9, warmup: 20, unit: 'ms' },
      )
      console.log(`  ratio ${(result['lsp tool, operation symbols']! / result['raw documentSymbol request']!).toFixed(2)}× (target ≤ 1.3×)`)
    },
    { iterations: 1, warmupIterations: 0 },
  )
})
