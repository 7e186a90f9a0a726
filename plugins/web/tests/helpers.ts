import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import Schema from 'schemastery'
import { afterEach } from 'vitest'
import { defineTool } from '@cordage/core'
import { createTestContext } from '@cordage/testing'
import { Web, type Config } from '../src/index.js'

/** A real HTTP server on a loopback address, recording the requests it saw. */
export interface TestServer {
  url: string
  host: string
  port: number
  requests: IncomingMessage[]
  /** Responses whose connection closed before the handler ended them. */
  aborted: number
  close(): Promise<void>
}

const servers: Server[] = []
afterEach(async () => {
  await Promise.all(
    servers.splice(0).map(
      (server) =>
        new Promise((resolve) => {
          server.closeAllConnections()
          server.close(resolve)
        }),
    ),
  )
})

/** Starts a server on `host` (default 127.0.0.2, so 127.0.0.1 stays a "different, private" address). */
export async function serve(handler: (request: IncomingMessage, response: ServerResponse) => void, host = '127.0.0.2'): Promise<TestServer> {
  const requests: IncomingMessage[] = []
  const state = { aborted: 0 }
  const server = createServer((request, response) => {
    requests.push(request)
    response.on('close', () => {
      if (!response.writableEnded) state.aborted++
    })
    handler(request, response)
  })
  servers.push(server)
  await new Promise<void>((resolve) => server.listen(0, host, resolve))
  const { port } = server.address() as AddressInfo
  const shown = host.includes(':') ? `[${host}]` : host
  return {
    url: `http://${shown}:${port}`,
    host,
    port,
    requests,
    get aborted() {
      return state.aborted
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

/** Loads the web plugin in a fresh test context (127.0.0.2 allowed unless the config says otherwise). */
export async function loadWeb(config: Partial<Config> = {}, options: { print?: boolean } = {}) {
  const ctx = await createTestContext(options)
  const fiber = await ctx.plugin(Web, { allowAddresses: ['127.0.0.2'], ...config })
  const call = (name: string, args: unknown, signal?: AbortSignal) => ctx.tools.execute({ name, arguments: args, signal })
  return { ctx, fiber, call }
}

/** A tool that answers at once: what a host that keeps answering answers. */
export const ping = defineTool({
  name: 'ping',
  description: 'Answers at once.',
  parameters: Schema.object({}),
  output: { schema: Schema.object({ pong: Schema.boolean().required() }), render: () => [{ type: 'text', text: 'pong' }] },
  execute: () => ({ pong: true }),
  concurrency: 'parallel',
})

export { codeOf, textOf, valueOf } from '@cordage/testing'
