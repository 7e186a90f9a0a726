import { compileValidator, deepFreeze, toJsonValue, type JsonSchemaNode } from '@cordage/core'
import type { PostDecision, PreDecision } from '@cordage/registry'

// What a mounted waterfall listener may answer, as JSON Schema: its answer arrives as JSON from the
// sandbox and is checked against these shapes before anything is applied.

const contentBlock: JsonSchemaNode = {
  oneOf: [
    { type: 'object', properties: { type: { const: 'text' }, text: { type: 'string' } }, required: ['type', 'text'], additionalProperties: false },
    {
      type: 'object',
      properties: { type: { const: 'image' }, data: { type: 'string' }, mimeType: { type: 'string' } },
      required: ['type', 'data', 'mimeType'],
      additionalProperties: false,
    },
    {
      type: 'object',
      properties: { type: { const: 'resource' }, uri: { type: 'string' }, mimeType: { type: 'string' }, text: { type: 'string' } },
      required: ['type', 'uri'],
      additionalProperties: false,
    },
  ],
}
const contexts: JsonSchemaNode = {
  type: 'array',
  items: { type: 'object', properties: { source: { type: 'string' }, text: { type: 'string' } }, required: ['source', 'text'], additionalProperties: false },
}

const checkPre = compileValidator({
  oneOf: [
    { type: 'object', properties: { kind: { const: 'allow' } }, required: ['kind'], additionalProperties: false },
    { type: 'object', properties: { kind: { const: 'deny' }, reason: { type: 'string' } }, required: ['kind', 'reason'], additionalProperties: false },
    { type: 'object', properties: { kind: { const: 'ask' }, reason: { type: 'string' } }, required: ['kind'], additionalProperties: false },
  ],
})

const checkPost = compileValidator({
  oneOf: [
    {
      type: 'object',
      properties: { kind: { const: 'accept' }, content: { type: 'array', items: contentBlock }, value: {}, additionalContexts: contexts },
      required: ['kind'],
      additionalProperties: false,
      not: { required: ['content', 'value'] },
    },
    {
      type: 'object',
      properties: { kind: { const: 'block' }, feedback: { oneOf: [{ type: 'string' }, { type: 'array', items: contentBlock }] }, additionalContexts: contexts },
      required: ['kind', 'feedback'],
      additionalProperties: false,
    },
  ],
})

/** Why an answer is not a decision of this kind, or undefined when it is one. */
function problem(check: ReturnType<typeof compileValidator>, answer: unknown): string | undefined {
  if (answer === undefined) return 'it returned nothing (return next() to pass the call on)'
  const violations = check(answer)
  return violations.length ? `it returned ${JSON.stringify(answer)?.slice(0, 200)}, not a decision` : undefined
}

/** The outcome of checking a mounted listener's answer: the decision to apply, or why it was ignored. */
export type Checked<T> = { decision: T; ignored?: undefined } | { decision: T; ignored: string }

/**
 * Applies a mounted `tools/pre-execute` answer. Mounted listeners may only tighten: a deny stands
 * (nothing after it needs asking), an ask stands unless the rest of the chain denies, and an allow is
 * whatever the rest of the chain answers, so a prepended listener cannot skip a policy's ask or deny.
 * An answer that is not a decision is ignored: the rest of the chain decides.
 */
export async function mergePre(answer: unknown, rest: () => Promise<PreDecision>): Promise<Checked<PreDecision>> {
  const why = problem(checkPre, answer)
  if (why) return { decision: await rest(), ignored: why }
  const decision = deepFreeze(toJsonValue(answer)) as unknown as PreDecision
  if (decision.kind === 'deny') return { decision }
  const after = await rest()
  if (decision.kind === 'allow' || after.kind === 'deny') return { decision: after }
  return { decision }
}

/**
 * Applies a mounted `tools/post-execute` answer. A block stands. An accept applies only when the rest
 * of the chain accepted the result unchanged; a block, a value redaction or a content replacement
 * from the rest of the chain wins, so a prepended listener cannot undo a policy's decision. An answer
 * that is not a decision is ignored.
 */
export async function mergePost(answer: unknown, rest: () => Promise<PostDecision>): Promise<Checked<PostDecision>> {
  const why = problem(checkPost, answer)
  if (why) return { decision: await rest(), ignored: why }
  const decision = deepFreeze(toJsonValue(answer)) as unknown as PostDecision
  if (decision.kind === 'block') return { decision }
  const after = await rest()
  if (after.kind !== 'accept' || after.content !== undefined || after.value !== undefined) return { decision: after }
  if (!after.additionalContexts?.length) return { decision }
  return { decision: { ...decision, additionalContexts: [...after.additionalContexts, ...(decision.additionalContexts ?? [])] } }
}
