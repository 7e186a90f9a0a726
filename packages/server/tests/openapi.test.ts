import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Ajv2020 } from 'ajv/dist/2020.js'
import type { Hono } from 'hono'
import { createApp } from '../src/app.js'
import { openApiDocument } from '../src/openapi.js'
import { startHarness, sseReader, type Harness } from './harness.js'

type Document = ReturnType<typeof openApiDocument>
const document = openApiDocument() as Document & {
  paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: object }> }> }>>
}

/** A validator for the response body of `method path` at `status`, from the document itself. */
function responseValidator(method: string, path: string, status: number) {
  const ajv = new Ajv2020({ strict: false })
  ajv.addFormat('date-time', (value: string) => !Number.isNaN(Date.parse(value)))
  const response = document.paths[path][method].responses[String(status)]
  expect(response, `${method} ${path} ${status} is documented`).toBeDefined()
  const schema = response.content!['application/json'].schema
  const rewritten = JSON.parse(JSON.stringify({ ...schema, $defs: document.components.schemas }).replaceAll('#/components/schemas/', '#/$defs/'))
  return ajv.compile(rewritten)
}

function routesOf(app: Hono): string[] {
  return [
    ...new Set(
      app.routes
        .filter((route) => route.method !== 'ALL' && route.path.startsWith('/api/'))
        .map((route) => `${route.method.toLowerCase()} ${route.path.replace(/:(\w+)/g, '{$1}')}`),
    ),
  ].sort()
}

describe('the OpenAPI document', () => {
  it('lists exactly the routes the app serves, and every schema it references exists', () => {
    const app = createApp({ store: () => undefined as never, launcher: undefined as never, cwd: '/', hosts: () => new Set() })
    const documented = Object.entries(document.paths)
      .flatMap(([path, methods]) => Object.keys(methods).map((method) => `${method} ${path}`))
      .sort()
    expect(documented).toEqual(routesOf(app))
    const refs = [...JSON.stringify(document).matchAll(/"#\/components\/schemas\/(\w+)"/g)].map((match) => match[1])
    for (const ref of refs) expect(document.components.schemas, ref).toHaveProperty(ref)
    expect(document.openapi).toBe('3.1.0')
  })

  describe('describes what the server answers', () => {
    let harness: Harness
    beforeAll(async () => {
      harness = await startHarness({
        store: { kind: 'jsonl' },
        rules: [{ tool: 'echo', action: 'ask' }],
        turns: [
          { text: 'hi', toolCalls: [{ name: 'echo', arguments: { text: 'x' } }] },
          { text: 'bye', usage: { inputTokens: 3, outputTokens: 1 } },
        ],
      })
    })
    afterAll(() => harness.close())

    it('for every JSON route, successes and errors alike', async () => {
      const check = async (method: string, path: string, response: Response, documentedPath = path): Promise<any> => {
        const body = await response.json()
        const validate = responseValidator(method, documentedPath, response.status)
        expect(validate(body), `${method} ${path} ${response.status}: ${JSON.stringify(validate.errors)}`).toBe(true)
        return body
      }
      await check('get', '/api/health', await harness.api('/api/health'))
      await check('get', '/api/openapi.json', await harness.api('/api/openapi.json'))
      const started = await check(
        'post',
        '/api/runs',
        await harness.api('/api/runs', { method: 'POST', body: JSON.stringify({ prompt: 'go', options: { maxTurns: 5 } }) }),
      )
      const id = started.id as string
      const stream = sseReader(await harness.api(`/api/sessions/${id}/events`))
      await stream.until((message) => message.event === 'pending')
      const [pending] = await check('get', `/api/runs/${id}/pending`, await harness.api(`/api/runs/${id}/pending`), '/api/runs/{id}/pending')
      expect(pending.kind).toBe('approval')
      await check('get', '/api/sessions', await harness.api('/api/sessions'))
      const answer = JSON.stringify({ requestId: pending.id, answer: 'allow' })
      await check('post', `/api/runs/${id}/answers`, await harness.api(`/api/runs/${id}/answers`, { method: 'POST', body: answer }), '/api/runs/{id}/answers')
      await check('post', `/api/runs/${id}/answers`, await harness.api(`/api/runs/${id}/answers`, { method: 'POST', body: answer }), '/api/runs/{id}/answers')
      await stream.until((message) => message.event === 'end')
      await check('get', '/api/sessions', await harness.api('/api/sessions'))
      await check('get', `/api/sessions/${id}`, await harness.api(`/api/sessions/${id}`), '/api/sessions/{id}')
      await check('post', `/api/runs/${id}/cancel`, await harness.api(`/api/runs/${id}/cancel`, { method: 'POST' }), '/api/runs/{id}/cancel')
      await check('get', '/api/sessions/nope', await harness.api('/api/sessions/nope'), '/api/sessions/{id}')
      await check('get', '/api/sessions/nope/events', await harness.api('/api/sessions/nope/events'), '/api/sessions/{id}/events')
      await check('post', '/api/runs', await harness.api('/api/runs', { method: 'POST', body: '{' }))
      await check('get', '/api/sessions', await harness.api('/api/sessions?status=nope'))
    })
  })
})
