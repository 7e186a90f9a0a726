import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type pg from 'pg'
// @ts-expect-error: pg publishes no types for this subpath (it is pg's `Client`)
import ClientModule from 'pg/lib/client.js'
import { afterAll, beforeAll } from 'vitest'
import Schema from 'schemastery'
import { defineTool } from '@cordage/core'
import { JsonlSessions } from '@cordage/agent'
import { createTestContext, ScriptedModel, type ScriptStep, type TestContext } from '@cordage/testing'
import Policy from '@cordage/plugin-policy'
import Interaction from '@cordage/plugin-interaction'
import StorePostgres from '@cordage/plugin-store-postgres'
import { startServer, type CordageServer, type ServerOptions } from '../src/server.js'

const Client = ClientModule as typeof pg.Client

/** The PostgreSQL the tests use (`scripts/services.sh start` exports it); its cases skip without it. */
export const postgresUrl = process.env.CORDAGE_TEST_POSTGRES_URL

/** A fresh database for this file, dropped afterwards; `url()` is its connection string. */
export function freshDatabase(): { url(): string } {
  const name = `cordage_server_${process.pid}_${Math.random().toString(16).slice(2, 8)}`
  let admin: pg.Client | undefined
  let url = ''
  beforeAll(async () => {
    if (!postgresUrl) return
    admin = new Client({ connectionString: postgresUrl })
    await admin.connect()
    await admin.query(`CREATE DATABASE ${name}`)
    const parsed = new URL(postgresUrl)
    parsed.pathname = `/${name}`
    url = parsed.toString()
  }, 60_000)
  afterAll(async () => {
    await admin?.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    await admin?.end()
  }, 60_000)
  return { url: () => url }
}

/** Which store a harness keeps its sessions in. */
export type StoreKind = { kind: 'jsonl' } | { kind: 'postgres'; url: () => string }

/** A real server over a real Context: registry, store, scripted model, an `echo` tool, policy and interaction. */
export interface Harness {
  ctx: TestContext
  server: CordageServer
  url: string
  dir: string
  model: ScriptedModel
  /** `fetch` of `path` on the server, with the token when there is one. */
  api(path: string, init?: RequestInit): Promise<Response>
  close(): Promise<void>
}

export interface HarnessOptions extends Partial<Omit<ServerOptions, 'ctx'>> {
  store: StoreKind
  turns?: ScriptStep[]
  /** Policy rules (e.g. `[{ tool: 'echo', action: 'ask' }]`). */
  rules?: Array<Record<string, unknown>>
}

/** The `echo` tool: returns `{ said }`, rendered as the text it was given. */
export const echoTool = defineTool({
  name: 'echo',
  description: 'Echoes its text.',
  parameters: Schema.object({ text: Schema.string().required() }),
  output: { schema: Schema.object({ said: Schema.string().required() }), render: (_args, value) => [{ type: 'text', text: value.said }] },
  execute: (args) => ({ said: args.text }),
})

export async function startHarness(options: HarnessOptions): Promise<Harness> {
  const dir = mkdtempSync(join(tmpdir(), 'cordage-server-'))
  const ctx = await createTestContext()
  const { store, turns = [], rules = [], ...serverOptions } = options
  const fibers = [
    store.kind === 'jsonl' ? await ctx.plugin(JsonlSessions, { cwd: dir, pollMs: 50 }) : await ctx.plugin(StorePostgres, { url: store.url(), pollMs: 50 }),
    await ctx.plugin(ScriptedModel, { turns }),
    await ctx.plugin(Policy, { rules: rules as never }),
    await ctx.plugin(Interaction, {}),
  ]
  const unregister = ctx.tools.register(echoTool)
  const model = ctx.get('model') as unknown as ScriptedModel
  const server = await startServer({ ctx, cwd: dir, ...serverOptions })
  return {
    ctx,
    server,
    url: server.url,
    dir,
    model,
    api(path, init = {}) {
      const headers = new Headers(init.headers)
      if (serverOptions.token && !headers.has('authorization')) headers.set('authorization', `Bearer ${serverOptions.token}`)
      return fetch(server.url + path, { ...init, headers })
    },
    async close() {
      await server.close()
      unregister()
      for (const fiber of fibers.reverse()) await fiber.dispose()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/** One message of an event stream. */
export interface SseMessage {
  id?: string
  event: string
  data: string
}

/**
 * Reads a `text/event-stream` response message by message (comments skipped) until it ends; `next()`
 * resolves to `undefined` at the end.
 */
export function sseReader(response: Response): {
  next(): Promise<SseMessage | undefined>
  until(predicate: (message: SseMessage) => boolean): Promise<SseMessage[]>
  cancel(): Promise<void>
} {
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader()
  let buffer = ''
  const queue: SseMessage[] = []
  let done = false
  async function next(): Promise<SseMessage | undefined> {
    for (;;) {
      if (queue.length) return queue.shift()
      if (done) return undefined
      const chunk = await reader.read()
      if (chunk.done) {
        done = true
        continue
      }
      buffer += chunk.value
      let end: number
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end)
        buffer = buffer.slice(end + 2)
        const message: SseMessage = { event: 'message', data: '' }
        const data: string[] = []
        let fields = 0
        for (const line of block.split('\n')) {
          if (line.startsWith(':')) continue
          const colon = line.indexOf(':')
          const key = colon < 0 ? line : line.slice(0, colon)
          const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '')
          fields++
          if (key === 'data') data.push(value)
          else if (key === 'event') message.event = value
          else if (key === 'id') message.id = value
        }
        if (!fields) continue
        message.data = data.join('\n')
        queue.push(message)
      }
    }
  }
  return {
    next,
    async until(predicate) {
      const seen: SseMessage[] = []
      for (;;) {
        const message = await next()
        if (!message) return seen
        seen.push(message)
        if (predicate(message)) return seen
      }
    },
    cancel: () => reader.cancel().catch(() => {}),
  }
}

/** Polls `check` until it returns a value other than `undefined` (a hang bound, not a timing assertion). */
export async function eventually<T>(check: () => Promise<T | undefined> | T | undefined, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await check()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error('eventually: condition not met in time')
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}
