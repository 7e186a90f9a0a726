import { randomBytes } from 'node:crypto'
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { ERROR_TYPES, PromptCache, checkMessagesRequest, signThinking } from './fake-anthropic-rules.js'
import { pieces, sendJson, sleep } from './fake-http.js'
import type { FakeToolCall } from './fake-openai.js'
import { errorMessage } from '@cordage/core'

/** A scripted Messages reply, streamed or not depending on the request's `stream`. */
export interface FakeAnthropicReply {
  /** One thinking block per item, signed by the server (so an altered block fails when sent back). */
  thinking?: string | string[]
  /** Put one `redacted_thinking` block first. */
  redactedThinking?: boolean
  text?: string
  toolCalls?: FakeToolCall[]
  /** Default `tool_use` with tool calls, else `end_turn`. */
  stopReason?: string
  /** Output tokens (default: produced characters / 4). */
  outputTokens?: number
  /** Characters per text, thinking and input_json delta (default 4). */
  chunkSize?: number
  /** After this many SSE events, send `event: error` with this body's `error` and stop. */
  streamError?: { after: number; type: string; message: string }
  delayMs?: number
}

/** A scripted HTTP error with the API's body `{ type: 'error', error: { type, message }, request_id }`. */
export interface FakeAnthropicHttpError {
  status: number
  /** Default: the API's type for the status (`rate_limit_error`, `overloaded_error`, …). */
  type?: string
  message?: string
  retryAfter?: number | string
  headers?: Record<string, string>
}

/** One scripted turn, or a function of the request that returns one. */
export type FakeAnthropicTurn =
  | FakeAnthropicReply
  | FakeAnthropicHttpError
  | ((request: FakeAnthropicRequest) => FakeAnthropicReply | FakeAnthropicHttpError | Promise<FakeAnthropicReply | FakeAnthropicHttpError>)

/** A request the fake server received, with what its prompt cache did. */
export interface FakeAnthropicRequest {
  method: string
  path: string
  headers: IncomingHttpHeaders
  body: any
  rawBody: string
  /** The simulated cache outcome (tokens), for requests that passed the checks. */
  cache?: { total: number; read: number; write: number }
}

export interface FakeAnthropicOptions {
  /** When set, requests without `x-api-key: <apiKey>` (or `Authorization: Bearer <apiKey>`) get a 401. */
  apiKey?: string
  /** Reuse the script cyclically instead of consuming it. */
  loop?: boolean
  /** Behave like a model that thinks unless `thinking: { type: 'disabled' }` (the newest models). */
  alwaysThinks?: boolean
  /** Smallest prefix (tokens, estimated as characters / 4) the cache stores; the real API's is 1024 or more. */
  minCacheTokens?: number
  /** A small model: a prompt above this many tokens (characters / 4) gets the API's "prompt is too long" 400. */
  contextWindow?: number
}

/** A running fake Anthropic Messages server on 127.0.0.1. */
export interface FakeAnthropicServer {
  /** `http://127.0.0.1:<port>`: the SDK's `baseURL` (it appends `/v1/messages`). */
  readonly baseURL: string
  readonly requests: FakeAnthropicRequest[]
  push(...turns: FakeAnthropicTurn[]): void
  pending(): number
  close(): Promise<void>
}

/**
 * Starts a real HTTP server speaking the Messages API: `POST /v1/messages` answers each valid request
 * with the next scripted turn as SSE (`message_start`, per block `content_block_start` / deltas /
 * `content_block_stop`, `ping`, `message_delta` with cumulative usage, `message_stop`) or one JSON
 * message. It checks what the real API checks (tool_use/tool_result pairing, signed thinking sent back
 * unaltered and first in the answered turn, at most 4 cache breakpoints) and simulates the prompt cache.
 */
export async function startFakeAnthropic(turns: FakeAnthropicTurn[] = [], options: FakeAnthropicOptions = {}): Promise<FakeAnthropicServer> {
  const script = [...turns]
  const requests: FakeAnthropicRequest[] = []
  const secret = randomBytes(16).toString('hex')
  const issued = new Set<string>()
  const cache = new PromptCache(options.minCacheTokens ?? 0)
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const rawBody = Buffer.concat(chunks).toString('utf8')
    let body: any
    try {
      body = rawBody ? JSON.parse(rawBody) : undefined
    } catch {}
    const record: FakeAnthropicRequest = { method: req.method ?? 'GET', path: req.url ?? '/', headers: req.headers, body, rawBody }
    requests.push(record)
    if (record.method !== 'POST' || record.path.split('?')[0] !== '/v1/messages') return sendError(res, { status: 404, message: `Not found: ${record.path}` })
    const key = req.headers['x-api-key'] ?? req.headers.authorization?.replace(/^Bearer /, '')
    if (options.apiKey !== undefined && key !== options.apiKey) return sendError(res, { status: 401, message: 'invalid x-api-key' })
    if (!req.headers['anthropic-version']) return sendError(res, { status: 400, message: 'anthropic-version: header is required' })
    if (body === undefined) return sendError(res, { status: 400, message: 'There was an issue with your request body: not valid JSON' })
    const invalid = checkMessagesRequest(body, secret, issued, options.alwaysThinks ?? false)
    if (invalid) return sendError(res, { status: 400, message: invalid })
    const size = cache.apply(body, false).total
    if (options.contextWindow !== undefined && size > options.contextWindow) {
      return sendError(res, { status: 400, message: `prompt is too long: ${size} tokens > ${options.contextWindow} maximum` })
    }
    const next = script.shift()
    if (next === undefined) return sendError(res, { status: 400, message: `fake Anthropic server: no scripted turn left for request ${requests.length}` })
    if (options.loop) script.push(next)
    let turn: FakeAnthropicReply | FakeAnthropicHttpError
    try {
      turn = typeof next === 'function' ? await next(record) : next
    } catch (error) {
      return sendError(res, { status: 500, message: `fake Anthropic server: the scripted turn threw: ${errorMessage(error)}` })
    }
    if ('status' in turn) return sendError(res, turn)
    record.cache = cache.apply(body)
    const message = buildMessage(turn, String(body.model), record.cache, secret, issued)
    if (body.stream === true) await streamMessage(res, message, turn)
    else sendJson(res, 200, message, { 'request-id': requestId() })
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => resolve())
  })
  const { port } = server.address() as AddressInfo
  return {
    baseURL: `http://127.0.0.1:${port}`,
    requests,
    push: (...more) => void script.push(...more),
    pending: () => script.length,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      }),
  }
}

const requestId = () => `req_${randomBytes(12).toString('hex')}`

function sendError(res: ServerResponse, error: FakeAnthropicHttpError): void {
  const id = requestId()
  const headers: Record<string, string> = { 'request-id': id, ...error.headers }
  if (error.retryAfter !== undefined) headers['retry-after'] = String(error.retryAfter)
  const type = error.type ?? ERROR_TYPES[error.status] ?? (error.status >= 500 ? 'api_error' : 'invalid_request_error')
  sendJson(res, error.status, { type: 'error', error: { type, message: error.message ?? `scripted HTTP ${error.status}` }, request_id: id }, headers)
}

/** The complete message a reply stands for (what a non-streaming request receives). */
function buildMessage(reply: FakeAnthropicReply, model: string, cache: { total: number; read: number; write: number }, secret: string, issued: Set<string>) {
  const content: any[] = []
  if (reply.redactedThinking) {
    const data = randomBytes(24).toString('base64')
    issued.add(data)
    content.push({ type: 'redacted_thinking', data })
  }
  const thoughts = reply.thinking === undefined ? [] : Array.isArray(reply.thinking) ? reply.thinking : [reply.thinking]
  for (const thinking of thoughts) content.push({ type: 'thinking', thinking, signature: signThinking(secret, thinking) })
  if (reply.text) content.push({ type: 'text', text: reply.text })
  for (const [index, call] of (reply.toolCalls ?? []).entries()) {
    const input = typeof call.arguments === 'string' ? JSON.parse(call.arguments) : (call.arguments ?? {})
    content.push({ type: 'tool_use', id: call.id ?? `toolu_${index}_${randomBytes(6).toString('hex')}`, name: call.name, input })
  }
  const produced = content.reduce((sum, block) => sum + JSON.stringify(block).length, 0)
  return {
    id: `msg_${randomBytes(12).toString('hex')}`,
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason: reply.stopReason ?? (reply.toolCalls?.length ? 'tool_use' : 'end_turn'),
    stop_sequence: null,
    usage: {
      input_tokens: cache.total - cache.read - cache.write,
      cache_creation_input_tokens: cache.write,
      cache_read_input_tokens: cache.read,
      output_tokens: reply.outputTokens ?? Math.ceil(produced / 4),
    },
  }
}

/** The SSE events of `message`, in the API's order, with deltas of `chunkSize` characters. */
function streamEvents(message: ReturnType<typeof buildMessage>, size: number): Array<[string, object]> {
  const { content, usage, stop_reason: stopReason, ...head } = message
  const events: Array<[string, object]> = [
    ['message_start', { type: 'message_start', message: { ...head, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } } }],
    ['ping', { type: 'ping' }],
  ]
  content.forEach((block: any, index: number) => {
    const start =
      block.type === 'thinking'
        ? { type: 'thinking', thinking: '', signature: '' }
        : block.type === 'text'
          ? { type: 'text', text: '' }
          : block.type === 'tool_use'
            ? { ...block, input: {} }
            : block
    events.push(['content_block_start', { type: 'content_block_start', index, content_block: start }])
    const delta = (value: object) => events.push(['content_block_delta', { type: 'content_block_delta', index, delta: value }])
    if (block.type === 'thinking') {
      for (const piece of pieces(block.thinking, size)) delta({ type: 'thinking_delta', thinking: piece })
      delta({ type: 'signature_delta', signature: block.signature })
    } else if (block.type === 'text') {
      for (const piece of pieces(block.text, size)) delta({ type: 'text_delta', text: piece })
    } else if (block.type === 'tool_use') {
      delta({ type: 'input_json_delta', partial_json: '' })
      for (const piece of pieces(JSON.stringify(block.input), size)) delta({ type: 'input_json_delta', partial_json: piece })
    }
    events.push(['content_block_stop', { type: 'content_block_stop', index }])
  })
  events.push(['message_delta', { type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage }])
  events.push(['message_stop', { type: 'message_stop' }])
  return events
}

async function streamMessage(res: ServerResponse, message: ReturnType<typeof buildMessage>, reply: FakeAnthropicReply): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'request-id': requestId() })
  // The API answers with its headers at once and streams the events as they come.
  res.flushHeaders()
  const events = streamEvents(message, Math.max(1, reply.chunkSize ?? 4))
  for (const [index, [name, data]] of events.entries()) {
    if (res.destroyed) return
    if (reply.streamError && index === reply.streamError.after) {
      const { type, message: text } = reply.streamError
      res.write(`event: error\ndata: ${JSON.stringify({ type: 'error', error: { type, message: text } })}\n\n`)
      return void res.end()
    }
    if (reply.delayMs) await sleep(reply.delayMs)
    res.write(`event: ${name}\ndata: ${JSON.stringify(data)}\n\n`)
  }
  res.end()
}
