import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { pieces, sendJson, sleep, write } from './fake-http.js'
import { checkChatRequest, checkReasoningContent, PrefixCache, usageOf } from './fake-openai-rules.js'
import { errorMessage } from '@cordage/core'

/** A tool call the fake model makes; `arguments` may be raw JSON text or a value to serialise. */
export interface FakeToolCall {
  id?: string
  name: string
  arguments?: string | unknown
}

/** A way to break a response: bad JSON, a dropped connection, or a stream that stops without ending. */
export interface FakeFault {
  /** `malformed`: send `data` (default `{"id": broken`) as a chunk; `drop`: destroy the socket; `stall`: stop writing. */
  type: 'malformed' | 'drop' | 'stall'
  /** How many well-formed `data:` chunks go out first (the role chunk counts). `drop` with 0 drops before any byte. */
  after?: number
  data?: string
}

/** A scripted successful completion, streamed or not depending on the request's `stream`. */
export interface FakeReply {
  /** DeepSeek thinking: streamed as `reasoning_content` deltas before the text (and in the JSON message). */
  reasoning?: string
  text?: string
  toolCalls?: FakeToolCall[]
  /** Default `tool_calls` when there are tool calls, else `stop`. */
  finishReason?: string
  /** Default: derived from the request and reply sizes, with cache hits from the prefix shared with earlier requests. */
  usage?: { prompt_tokens: number; completion_tokens: number; [field: string]: unknown }
  /** Characters per text delta and per arguments fragment (default 4). */
  chunkSize?: number
  /** Pause before each chunk and before ending the response, in milliseconds (default 0). */
  delayMs?: number
  /** Write each SSE event in pieces of this many bytes, to split lines and UTF-8 sequences. */
  bytesPerWrite?: number
  fault?: FakeFault
}

/** A scripted HTTP error with an OpenAI-shaped body `{ error: { message, type, code } }`. */
export interface FakeHttpError {
  status: number
  message?: string
  /** `Retry-After` header value (seconds or an HTTP date). */
  retryAfter?: number | string
  /** `retry-after-ms` header value. */
  retryAfterMs?: number
  headers?: Record<string, string>
}

/** One scripted turn: a reply, an HTTP error, or a function of the request that returns one. */
export type FakeTurn = FakeReply | FakeHttpError | ((request: FakeOpenAIRequest) => FakeReply | FakeHttpError | Promise<FakeReply | FakeHttpError>)

/** A request the fake server received. */
export interface FakeOpenAIRequest {
  method: string
  path: string
  headers: IncomingHttpHeaders
  /** The parsed JSON body (`undefined` when absent or not JSON). */
  body: any
  rawBody: string
  /** `performance.now()` when the request arrived. */
  time: number
  /** True once the client closed the connection before the response was complete. */
  disconnected: boolean
}

export interface FakeOpenAIOptions {
  /** When set, requests without `Authorization: Bearer <apiKey>` get a 401 like the real service. */
  apiKey?: string
  /** Model name echoed in responses (default: the request's `model`). */
  model?: string
  /** Reuse the script cyclically instead of consuming it (benchmarks, long runs). */
  loop?: boolean
  /**
   * Behave like DeepSeek's thinking mode: reject a request whose assistant turns with tool calls lack
   * `reasoning_content` (with DeepSeek's 400 message), and report usage as `prompt_cache_hit_tokens` /
   * `prompt_cache_miss_tokens` instead of OpenAI's `prompt_tokens_details.cached_tokens`.
   */
  deepseek?: boolean
}

/** A running fake OpenAI-compatible server on 127.0.0.1. */
export interface FakeOpenAIServer {
  /** `http://127.0.0.1:<port>/v1`: pass it as the provider's `baseURL`. */
  readonly baseURL: string
  /** Every request received, in arrival order. */
  readonly requests: FakeOpenAIRequest[]
  /** Appends more turns to the script. */
  push(...turns: FakeTurn[]): void
  /** How many scripted turns are still unused. */
  pending(): number
  /** How many TCP connections were accepted (keep-alive reuse keeps this low). */
  connections(): number
  /** How many of them are still open (a client's pooled connections included). */
  openConnections(): number
  /** Stops the server and destroys open connections. */
  close(): Promise<void>
}

/**
 * Starts a real HTTP server on 127.0.0.1 (random port) speaking the Chat Completions wire format:
 * `POST /v1/chat/completions` answers each request with the next scripted turn (SSE chunks with split text
 * and tool-call deltas, a usage chunk on `stream_options.include_usage`, `data: [DONE]`; or one JSON
 * completion without `stream`). Requests that break the wire format get a 400, like the real service.
 */
export async function startFakeOpenAI(turns: FakeTurn[] = [], options: FakeOpenAIOptions = {}): Promise<FakeOpenAIServer> {
  const script = [...turns]
  const requests: FakeOpenAIRequest[] = []
  const cache = new PrefixCache()
  let served = 0

  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const rawBody = Buffer.concat(chunks).toString('utf8')
    let body: any
    try {
      body = rawBody ? JSON.parse(rawBody) : undefined
    } catch {
      body = undefined
    }
    const record: FakeOpenAIRequest = {
      method: req.method ?? 'GET',
      path: req.url ?? '/',
      headers: req.headers,
      body,
      rawBody,
      time: performance.now(),
      disconnected: false,
    }
    requests.push(record)
    res.on('close', () => {
      if (!res.writableFinished) record.disconnected = true
    })

    const path = record.path.split('?')[0]
    if (record.method === 'GET' && path === '/v1/models') {
      return sendJson(res, 200, { object: 'list', data: [{ id: options.model ?? 'fake-model', object: 'model', owned_by: 'cordage' }] })
    }
    if (record.method !== 'POST' || path !== '/v1/chat/completions') {
      return sendError(res, { status: 404, message: `Unknown request URL: ${record.method} ${record.path}` })
    }
    if (options.apiKey !== undefined && req.headers.authorization !== `Bearer ${options.apiKey}`) {
      return sendError(res, { status: 401, message: 'Incorrect API key provided.' })
    }
    if (body === undefined) return sendError(res, { status: 400, message: 'We could not parse the JSON body of your request.' })
    const invalid = checkChatRequest(body) ?? (options.deepseek ? checkReasoningContent(body) : undefined)
    if (invalid) return sendError(res, { status: 400, message: invalid })

    const next = script.shift()
    if (next === undefined) {
      return sendError(res, { status: 400, message: `fake OpenAI server: no scripted turn left for request ${requests.length} (${served} served)` })
    }
    served++
    if (options.loop) script.push(next)
    let turn: FakeReply | FakeHttpError
    try {
      turn = typeof next === 'function' ? await next(record) : next
    } catch (error) {
      return sendError(res, { status: 500, message: `fake OpenAI server: the scripted turn threw: ${errorMessage(error)}` })
    }
    if ('status' in turn) return sendError(res, turn)
    const model = options.model ?? String(body.model)
    const usage = usageOf(turn, rawBody.length, cache.cached(body), options.deepseek ?? false)
    if (body.stream === true) await streamReply(res, turn, model, body, usage)
    else await replyJson(res, turn, model, usage)
  })

  let connections = 0
  let open = 0
  server.on('connection', (socket) => {
    connections++
    open++
    socket.once('close', () => {
      open--
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => resolve())
  })
  const { port } = server.address() as AddressInfo
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    push: (...more) => {
      script.push(...more)
    },
    pending: () => script.length,
    connections: () => connections,
    openConnections: () => open,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      }),
  }
}

function sendError(res: ServerResponse, error: FakeHttpError): void {
  const headers: Record<string, string> = { ...error.headers }
  if (error.retryAfter !== undefined) headers['retry-after'] = String(error.retryAfter)
  if (error.retryAfterMs !== undefined) headers['retry-after-ms'] = String(error.retryAfterMs)
  const type =
    error.status === 401
      ? 'invalid_request_error'
      : error.status === 429
        ? 'rate_limit_exceeded'
        : error.status >= 500
          ? 'server_error'
          : 'invalid_request_error'
  const code = error.status === 401 ? 'invalid_api_key' : error.status === 429 ? 'rate_limit_exceeded' : null
  sendJson(res, error.status, { error: { message: error.message ?? `scripted HTTP ${error.status}`, type, param: null, code } }, headers)
}

function callsOf(reply: FakeReply) {
  return (reply.toolCalls ?? []).map((call, index) => ({
    id: call.id ?? `call_${index}_${Math.random().toString(36).slice(2, 10)}`,
    name: call.name,
    arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments ?? {}),
  }))
}

async function streamReply(res: ServerResponse, reply: FakeReply, model: string, body: any, usage: Record<string, unknown>): Promise<void> {
  const fault = reply.fault
  if (fault?.type === 'drop' && (fault.after ?? 0) === 0) return void res.socket?.destroy()
  const includeUsage = body.stream_options?.include_usage === true
  const id = `chatcmpl-${Math.random().toString(36).slice(2, 12)}`
  const created = Math.floor(Date.now() / 1000)
  const size = Math.max(1, reply.chunkSize ?? 4)
  const calls = callsOf(reply)
  const chunk = (delta: object, finish: string | null = null) => ({
    id,
    object: 'chat.completion.chunk',
    created,
    model,
    system_fingerprint: 'fp_fake',
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    ...(includeUsage ? { usage: null } : {}),
  })
  const events: string[] = [JSON.stringify(chunk({ role: 'assistant', content: '', refusal: null }))]
  for (const piece of pieces(reply.reasoning ?? '', size)) events.push(JSON.stringify(chunk({ content: null, reasoning_content: piece })))
  for (const piece of pieces(reply.text ?? '', size)) events.push(JSON.stringify(chunk({ content: piece })))
  calls.forEach((call, index) => {
    events.push(JSON.stringify(chunk({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] })))
    for (const piece of pieces(call.arguments, size)) events.push(JSON.stringify(chunk({ tool_calls: [{ index, function: { arguments: piece } }] })))
  })
  events.push(JSON.stringify(chunk({}, reply.finishReason ?? (calls.length ? 'tool_calls' : 'stop'))))
  if (includeUsage) events.push(JSON.stringify({ id, object: 'chat.completion.chunk', created, model, system_fingerprint: 'fp_fake', choices: [], usage }))
  events.push('[DONE]')

  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' })
  for (let index = 0; index < events.length; index++) {
    if (res.destroyed) return
    if (fault && index === (fault.after ?? 1)) {
      if (fault.type === 'drop') return void res.socket?.destroy()
      if (fault.type === 'stall') return
      events.splice(index, events.length - index, fault.data ?? '{"id": broken')
    }
    if (reply.delayMs) await sleep(reply.delayMs)
    // Paced writes only when something depends on them (a later fault, split bytes); otherwise full speed.
    if (fault || reply.bytesPerWrite) await write(res, `data: ${events[index]}\n\n`, reply.bytesPerWrite)
    else res.write(`data: ${events[index]}\n\n`)
  }
  if (reply.delayMs) await sleep(reply.delayMs)
  res.end()
}

async function replyJson(res: ServerResponse, reply: FakeReply, model: string, usage: Record<string, unknown>): Promise<void> {
  const fault = reply.fault
  if (fault?.type === 'drop') return void res.socket?.destroy()
  if (fault?.type === 'stall') return
  if (reply.delayMs) await sleep(reply.delayMs)
  if (fault?.type === 'malformed') {
    res.writeHead(200, { 'content-type': 'application/json' })
    return void res.end(fault.data ?? '{"id": broken')
  }
  const calls = callsOf(reply)
  const message = {
    role: 'assistant',
    content: reply.text ?? (calls.length ? null : ''),
    ...(reply.reasoning !== undefined && { reasoning_content: reply.reasoning }),
    refusal: null,
    ...(calls.length ? { tool_calls: calls.map((call) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } })) } : {}),
  }
  sendJson(res, 200, {
    id: `chatcmpl-${Math.random().toString(36).slice(2, 12)}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    system_fingerprint: 'fp_fake',
    choices: [{ index: 0, message, logprobs: null, finish_reason: reply.finishReason ?? (calls.length ? 'tool_calls' : 'stop') }],
    usage,
  })
}
