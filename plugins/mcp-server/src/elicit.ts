import { AsyncLocalStorage } from 'node:async_hooks'
import {
  ElicitResultSchema,
  type ClientCapabilities,
  type ElicitRequestFormParams,
  type ElicitResult,
  type PrimitiveSchemaDefinition,
} from '@modelcontextprotocol/sdk/types.js'
import { CordageError, type ToolExec } from '@cordage/core'
import type { ApprovalService } from '@cordage/registry'
import type { Answer, InteractionService, PlanReview, Question } from '@cordage/services'

/** The MCP client whose `tools/call` is running: asking "the user" means asking that client. */
export interface Caller {
  capabilities(): ClientCapabilities | undefined
  /** Sends `elicitation/create` on the calling request's stream (so HTTP sessions get it too). */
  elicit(params: ElicitRequestFormParams, signal: AbortSignal): Promise<ElicitResult>
}

const callers = new AsyncLocalStorage<Caller>()

/** Runs `work` (a tool call) with `caller` as the client that elicitation goes to. */
export function withCaller<T>(caller: Caller, work: () => Promise<T>): Promise<T> {
  return callers.run(caller, work)
}

/** A `Caller` sending through a request handler's `extra.sendRequest`. */
export function callerOf(
  capabilities: () => ClientCapabilities | undefined,
  sendRequest: (
    request: { method: 'elicitation/create'; params: ElicitRequestFormParams },
    schema: typeof ElicitResultSchema,
    options: { signal: AbortSignal },
  ) => Promise<ElicitResult>,
): Caller {
  return { capabilities, elicit: (params, signal) => sendRequest({ method: 'elicitation/create', params }, ElicitResultSchema, { signal }) }
}

/** The calling client, if it declared the elicitation capability (an empty object means form mode). */
function elicitingCaller(): Caller | undefined {
  const caller = callers.getStore()
  const elicitation = caller?.capabilities()?.elicitation
  if (!caller || !elicitation || (elicitation.url && !elicitation.form)) return undefined
  return caller
}

function optionSchema(question: Question): PrimitiveSchemaDefinition {
  const choices = question.options.map((option: Question['options'][number]) => ({
    const: option.label,
    title: option.description ? `${option.label}: ${option.description}` : option.label,
  }))
  const title = question.header ? `${question.header}: ${question.question}` : question.question
  return question.multiSelect ? { type: 'array', title, items: { anyOf: choices } } : { type: 'string', title, oneOf: choices }
}

function declined(result: ElicitResult, what: string): CordageError {
  return new CordageError(
    result.action === 'cancel' ? 'ABORTED' : 'INTERACTION_DECLINED',
    `the user ${result.action === 'cancel' ? 'dismissed' : 'declined'} ${what}; carry on with your best judgement and say what you assumed`,
  )
}

/** Questions become one form: a choice field per question (`q0`…) plus an optional own-answer field (`q0_custom`). */
async function ask(questions: readonly Question[], signal: AbortSignal): Promise<Answer[]> {
  const caller = elicitingCaller()
  if (!caller)
    throw new CordageError(
      'INTERACTION_UNAVAILABLE',
      'ask_user_question: the MCP client does not support elicitation, so the user cannot be asked; decide yourself, state your assumption, and carry on',
    )
  const properties: Record<string, PrimitiveSchemaDefinition> = {}
  questions.forEach((question, index) => {
    if (question.options.length) properties[`q${index}`] = optionSchema(question)
    properties[`q${index}_custom`] = { type: 'string', title: question.options.length ? 'Or your own answer' : question.question }
  })
  const result = await caller.elicit(
    { message: questions.length === 1 ? questions[0]!.question : 'The agent has questions for you.', requestedSchema: { type: 'object', properties } },
    signal,
  )
  if (result.action !== 'accept') throw declined(result, 'the questions')
  const content = result.content ?? {}
  return questions.map((question, index) => {
    const picked = content[`q${index}`]
    const selected = Array.isArray(picked) ? picked.map(String) : typeof picked === 'string' ? [picked] : []
    const custom = content[`q${index}_custom`]
    const hasCustom = typeof custom === 'string' && custom.trim() !== ''
    if (!selected.length && !hasCustom)
      throw new CordageError(
        'INTERACTION_DECLINED',
        `the user left "${question.question}" unanswered; carry on with your best judgement and say what you assumed`,
      )
    return hasCustom ? { id: question.id, selected: question.multiSelect ? selected : [], custom } : { id: question.id, selected }
  })
}

/** A single-choice field titled "Decision": values mapped to their titles. */
function decision(choices: Record<string, string>): PrimitiveSchemaDefinition {
  return { type: 'string', title: 'Decision', oneOf: Object.entries(choices).map(([value, title]) => ({ const: value, title })) }
}

async function approvePlan(plan: string, signal: AbortSignal): Promise<PlanReview> {
  const caller = elicitingCaller()
  if (!caller)
    throw new CordageError(
      'INTERACTION_UNAVAILABLE',
      'exit_plan_mode: the MCP client does not support elicitation, so nobody can approve the plan; present it in your answer instead',
    )
  const result = await caller.elicit(
    {
      message: `Approve this plan and leave plan mode?\n\n${plan}`,
      requestedSchema: {
        type: 'object',
        properties: {
          decision: decision({ approve: 'Approve', keep: 'Keep planning' }),
          feedback: { type: 'string', title: 'What should change? (optional)' },
        },
        required: ['decision'],
      },
    },
    signal,
  )
  if (result.action !== 'accept') return { approved: false }
  if (result.content?.decision === 'approve') return { approved: true }
  const feedback = result.content?.feedback
  return typeof feedback === 'string' && feedback.trim() ? { approved: false, feedback } : { approved: false }
}

/** `ctx.interaction` for MCP: elicitation on the calling client, or `INTERACTION_UNAVAILABLE`. */
export const mcpInteraction: InteractionService = { ask, approvePlan }

/** `ctx.approval` for MCP: policy `ask` decisions become an allow/deny elicitation on the calling client. */
export const mcpApproval: ApprovalService = {
  async request(exec: ToolExec, reason?: string) {
    const caller = elicitingCaller()
    if (!caller)
      throw new CordageError(
        'APPROVAL_UNAVAILABLE',
        `APPROVAL_UNAVAILABLE: "${exec.name}" needs approval${reason ? ` (${reason})` : ''}, but the MCP client does not support elicitation, so nobody can approve it`,
      )
    const args = JSON.stringify(exec.arguments)
    const result = await caller.elicit(
      {
        message: `Allow the tool call "${exec.name}"${reason ? ` (${reason})` : ''}?\n\nArguments: ${args.length > 2000 ? `${args.slice(0, 2000)}…` : args}`,
        requestedSchema: {
          type: 'object',
          properties: {
            decision: decision({ allow: 'Allow', deny: 'Deny' }),
          },
          required: ['decision'],
        },
      },
      exec.signal,
    )
    return result.action === 'accept' && result.content?.decision === 'allow' ? 'allow' : 'deny'
  },
}
