/** JSON Schemas of the API's bodies, by name (`#/components/schemas/<name>`). */
const schemas = {
  Error: {
    type: 'object',
    required: ['error'],
    properties: { error: { type: 'object', required: ['code', 'message'], properties: { code: { type: 'string' }, message: { type: 'string' } } } },
  },
  Ok: { type: 'object', required: ['ok'], properties: { ok: { const: true } } },
  SessionParent: {
    type: 'object',
    required: ['callId', 'tool'],
    properties: { session: { type: 'string' }, callId: { type: 'string' }, tool: { type: 'string' } },
  },
  SessionInfo: {
    type: 'object',
    required: ['id', 'status', 'createdAt', 'updatedAt', 'lastSeq', 'turns', 'usage', 'pending'],
    properties: {
      id: { type: 'string' },
      status: { enum: ['running', 'waiting', 'ended'] },
      createdAt: { type: 'string', format: 'date-time' },
      updatedAt: { type: 'string', format: 'date-time' },
      lastSeq: { type: 'integer' },
      model: { type: 'string' },
      parent: { $ref: '#/components/schemas/SessionParent' },
      depth: { type: 'integer' },
      turns: { type: 'integer' },
      usage: { type: 'object', required: ['inputTokens', 'outputTokens'], properties: { inputTokens: { type: 'integer' }, outputTokens: { type: 'integer' } } },
      cost: { type: 'number' },
      durationMs: { type: 'number' },
      pending: { type: 'integer' },
    },
  },
  SessionHeader: {
    type: 'object',
    required: ['type', 'version', 'id', 'createdAt', 'cwd'],
    properties: {
      type: { const: 'session' },
      version: { type: 'integer' },
      id: { type: 'string' },
      createdAt: { type: 'string', format: 'date-time' },
      cwd: { type: 'string' },
      model: { type: 'string' },
      parent: { $ref: '#/components/schemas/SessionParent' },
      depth: { type: 'integer' },
    },
  },
  StoredEvent: {
    type: 'object',
    required: ['type', 'seq', 'time', 'data'],
    properties: { type: { type: 'string' }, seq: { type: 'integer', minimum: 1 }, time: { type: 'string', format: 'date-time' }, data: {} },
  },
  StoredSession: {
    type: 'object',
    required: ['header', 'events', 'warnings'],
    properties: {
      header: { $ref: '#/components/schemas/SessionHeader' },
      events: { type: 'array', items: { $ref: '#/components/schemas/StoredEvent' } },
      warnings: { type: 'array', items: { type: 'string' } },
    },
  },
  RunRequest: {
    type: 'object',
    required: ['prompt'],
    additionalProperties: false,
    properties: {
      prompt: { type: 'string', minLength: 1 },
      options: {
        type: 'object',
        additionalProperties: false,
        properties: { maxTurns: { type: 'integer', minimum: 1, maximum: 1000 }, system: { type: 'string' } },
      },
      cassette: { type: 'string', description: 'A recorded-model file inside the server working directory (offline runs).' },
    },
  },
  RunStarted: { type: 'object', required: ['id', 'url'], properties: { id: { type: 'string' }, url: { type: 'string' } } },
  Question: {
    type: 'object',
    required: ['id', 'question', 'options'],
    properties: {
      id: { type: 'string' },
      question: { type: 'string' },
      header: { type: 'string' },
      options: {
        type: 'array',
        items: { type: 'object', required: ['label'], properties: { label: { type: 'string' }, description: { type: 'string' } } },
      },
      multiSelect: { type: 'boolean' },
    },
  },
  Answer: {
    type: 'object',
    required: ['id', 'selected'],
    properties: { id: { type: 'string' }, selected: { type: 'array', items: { type: 'string' } }, custom: { type: 'string' } },
  },
  PlanReview: {
    type: 'object',
    required: ['approved'],
    properties: { approved: { type: 'boolean' }, feedback: { type: 'string' } },
  },
  PendingRequest: {
    oneOf: [
      {
        type: 'object',
        required: ['id', 'kind', 'tool', 'arguments'],
        properties: { id: { type: 'string' }, kind: { const: 'approval' }, tool: { type: 'string' }, arguments: {}, reason: { type: 'string' } },
      },
      {
        type: 'object',
        required: ['id', 'kind', 'questions'],
        properties: { id: { type: 'string' }, kind: { const: 'question' }, questions: { type: 'array', items: { $ref: '#/components/schemas/Question' } } },
      },
      { type: 'object', required: ['id', 'kind', 'plan'], properties: { id: { type: 'string' }, kind: { const: 'plan' }, plan: { type: 'string' } } },
    ],
  },
  AnswerRequest: {
    type: 'object',
    required: ['requestId', 'answer'],
    properties: {
      requestId: { type: 'string' },
      answer: {
        oneOf: [
          { enum: ['allow', 'deny', 'always'] },
          { type: 'array', items: { $ref: '#/components/schemas/Answer' } },
          { $ref: '#/components/schemas/PlanReview' },
        ],
      },
    },
  },
} as const

const ref = (name: keyof typeof schemas) => ({ $ref: `#/components/schemas/${name}` })
const json = (schema: object, description: string) => ({ description, content: { 'application/json': { schema } } })
const error = (description: string) => json(ref('Error'), description)
const idParameter = { name: 'id', in: 'path', required: true, schema: { type: 'string', pattern: '^[\\w.-]{1,128}$' } }
const common = { '401': error('No or wrong bearer token.'), '403': error('Host or Origin refused.') }

/** The OpenAPI 3.1 document of the API (`GET /api/openapi.json`). */
export function openApiDocument() {
  return {
    openapi: '3.1.0',
    info: { title: 'Cordage server API', version: '1', description: 'Runs, sessions, live events, approvals and questions of `cordage serve`.' },
    components: { schemas, securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
    security: [{}, { bearer: [] }],
    paths: {
      '/api/health': { get: { summary: 'Liveness.', responses: { '200': json(ref('Ok'), 'The server answers.'), ...common } } },
      '/api/openapi.json': { get: { summary: 'This document.', responses: { '200': json({ type: 'object' }, 'OpenAPI 3.1.'), ...common } } },
      '/api/sessions': {
        get: {
          summary: 'Sessions, newest first.',
          parameters: [
            { name: 'status', in: 'query', schema: { enum: ['running', 'waiting', 'ended'] } },
            { name: 'parent', in: 'query', schema: { type: 'string' }, description: 'A session id, or `none` for top-level sessions.' },
            { name: 'since', in: 'query', schema: { type: 'string', format: 'date-time' } },
            { name: 'until', in: 'query', schema: { type: 'string', format: 'date-time' } },
            { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 0 } },
          ],
          responses: { '200': json({ type: 'array', items: ref('SessionInfo') }, 'The sessions.'), '400': error('A bad filter.'), ...common },
        },
      },
      '/api/sessions/{id}': {
        get: {
          summary: 'One session: header, events, warnings.',
          parameters: [idParameter],
          responses: { '200': json(ref('StoredSession'), 'The session.'), '400': error('A malformed id.'), '404': error('No such session.'), ...common },
        },
      },
      '/api/sessions/{id}/events': {
        get: {
          summary: 'Server-sent events of a session: `stored` (id = seq), `delta`, `pending`, `resolved`, then `end`.',
          parameters: [
            idParameter,
            { name: 'Last-Event-ID', in: 'header', schema: { type: 'integer' }, description: 'Resume after this seq.' },
            { name: 'after', in: 'query', schema: { type: 'integer' }, description: 'Resume after this seq (when no Last-Event-ID).' },
          ],
          responses: {
            '200': { description: 'The event stream.', content: { 'text/event-stream': { schema: { type: 'string' } } } },
            '400': error('A malformed id, or a Last-Event-ID that is malformed or past the last stored event.'),
            '404': error('No such session.'),
            '503': error('Too many streams open.'),
            ...common,
          },
        },
      },
      '/api/runs': {
        post: {
          summary: 'Starts a run; its id is its session id.',
          requestBody: { required: true, content: { 'application/json': { schema: ref('RunRequest') } } },
          responses: {
            '202': json(ref('RunStarted'), 'Started.'),
            '400': error('A bad body or cassette.'),
            '413': error('The body is too large.'),
            '503': error('Too many runs, no model, or shutting down.'),
            ...common,
          },
        },
      },
      '/api/runs/{id}/pending': {
        get: {
          summary: 'What the run is waiting on.',
          parameters: [idParameter],
          responses: { '200': json({ type: 'array', items: ref('PendingRequest') }, 'The pending requests.'), '404': error('No such run.'), ...common },
        },
      },
      '/api/runs/{id}/answers': {
        post: {
          summary: 'Answers a pending request.',
          parameters: [idParameter],
          requestBody: { required: true, content: { 'application/json': { schema: ref('AnswerRequest') } } },
          responses: {
            '200': json(ref('Ok'), 'Answered.'),
            '400': error('A bad body or answer.'),
            '404': error('No such run or request.'),
            '409': error('Already answered, or the run ended.'),
            '413': error('The body is too large.'),
            ...common,
          },
        },
      },
      '/api/runs/{id}/cancel': {
        post: {
          summary: 'Cancels a run; its session ends with reason `cancelled`.',
          parameters: [idParameter],
          responses: { '202': json(ref('Ok'), 'Cancelling.'), '404': error('No such run.'), '409': error('The run ended.'), ...common },
        },
      },
    },
  }
}
