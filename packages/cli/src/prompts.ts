import { checkbox, expand, input, select } from '@inquirer/prompts'
import { CordageError, errorMessage } from '@cordage/core'
import type { Answer, PlanReview, Question } from '@cordage/services'
import type { Output } from './output.js'

/** Where prompts read keys and draw (a terminal), and how a Ctrl-C at a prompt is passed on. */
export interface PromptIO {
  input: NodeJS.ReadableStream
  output: NodeJS.WritableStream
  /** Draws a line above the prompt (the plan, the call being approved). */
  print(text: string): void
  /** The user pressed Ctrl-C at a prompt (raw mode swallows the signal): interrupt like Ctrl-C anywhere else. */
  interrupt(): void
  /** Called with true before a prompt is drawn and false after it is answered (to quiet other output). */
  prompting?(active: boolean): void
}

const OWN_ANSWER = Symbol('own answer')

// eslint-disable-next-line no-control-regex -- removing control characters is the point
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g

/**
 * Model-written text made safe for a terminal: escape sequences and other control characters are shown
 * as `\x1b`-style escapes, so a question or plan cannot move the cursor, recolour or hide what the user
 * is approving.
 */
export function sanitize(text: string): string {
  return text.replace(CONTROL, (char) => `\\x${char.charCodeAt(0).toString(16).padStart(2, '0')}`)
}

/** The user pressed Ctrl-C or the call was cancelled: `ABORTED`, after passing the Ctrl-C on. */
function dismissed(io: PromptIO, error: unknown): CordageError {
  const name = (error as Error | undefined)?.name
  if (name === 'ExitPromptError') io.interrupt()
  if (name === 'ExitPromptError' || name === 'AbortPromptError')
    return new CordageError('ABORTED', 'the user dismissed the prompt (Ctrl-C) without answering', { cause: error })
  return new CordageError('INTERACTION_FAILED', `the prompt failed: ${errorMessage(error)}`, { cause: error })
}

/**
 * Runs prompts one at a time: parallel tool calls that each need the user would otherwise draw over
 * each other on one terminal.
 */
export class PromptQueue {
  private tail: Promise<unknown> = Promise.resolve()

  constructor(
    private readonly io: PromptIO,
    private readonly output: Output,
  ) {}

  /** Asks each question in turn: arrow-key choice (space to tick several), or typing an own answer. */
  ask(questions: readonly Question[], signal: AbortSignal): Promise<Answer[]> {
    return this.serial(async (context) => {
      const answers: Answer[] = []
      for (const question of questions) answers.push(await this.askOne(question, { ...context, signal }))
      return answers
    })
  }

  /** Shows the plan, then asks Approve / Keep planning (with optional feedback). */
  approvePlan(plan: string, signal: AbortSignal): Promise<PlanReview> {
    return this.serial(async (context) => {
      const rule = this.output.style('dim', '─'.repeat(60))
      this.io.print(`${rule}\n${renderMarkdown(sanitize(plan), this.output)}\n${rule}`)
      const choice = await select(
        {
          message: 'Approve this plan and leave plan mode?',
          choices: [
            { name: 'Approve', value: 'approve', description: 'The agent carries out the plan.' },
            { name: 'Keep planning', value: 'keep', description: 'Stay in plan mode; you can say what to change.' },
          ],
        },
        { ...context, signal },
      )
      if (choice === 'approve') return { approved: true }
      const feedback = (await input({ message: 'What should change? (Enter to skip)' }, { ...context, signal })).trim()
      return feedback ? { approved: false, feedback } : { approved: false }
    })
  }

  /**
   * y (allow once), n (deny), a (allow this tool for the rest of the session). `settled` is checked
   * when the prompt's turn comes: an "always" given meanwhile answers a queued request without asking.
   */
  approve(summary: string, signal: AbortSignal, settled: () => boolean): Promise<'allow' | 'deny' | 'always'> {
    return this.serial(async (context) => {
      if (settled()) return 'allow'
      this.io.print(summary)
      return expand(
        {
          message: 'Allow this call?',
          default: 'n',
          choices: [
            { key: 'y', name: 'Yes, this once', value: 'allow' as const },
            { key: 'n', name: 'No', value: 'deny' as const },
            { key: 'a', name: 'Always for this tool, this session', value: 'always' as const },
          ],
        },
        { ...context, signal },
      )
    })
  }

  private async askOne(question: Question, context: { input: NodeJS.ReadableStream; output: NodeJS.WritableStream; signal: AbortSignal }): Promise<Answer> {
    const message = sanitize(question.header ? `[${question.header}] ${question.question}` : question.question)
    if (!question.options.length) return { id: question.id, selected: [], custom: await input({ message, required: true }, context) }
    // The value stays the exact label (the answer must match it); only what is drawn is sanitised.
    const choices = question.options.map((option) => ({
      name: sanitize(option.label),
      value: option.label as string | typeof OWN_ANSWER,
      ...(option.description && { description: sanitize(option.description) }),
    }))
    choices.push({ name: 'Type my own answer…', value: OWN_ANSWER })
    const picked = question.multiSelect ? await checkbox({ message, choices, required: true }, context) : [await select({ message, choices }, context)]
    const selected = picked.filter((value): value is string => value !== OWN_ANSWER)
    if (!picked.includes(OWN_ANSWER)) return { id: question.id, selected }
    const custom = (await input({ message: 'Your answer:', required: true }, context)).trim()
    // Own text replaces the choice for a single answer and adds to it for several.
    return question.multiSelect ? { id: question.id, selected, custom } : { id: question.id, selected: [], custom }
  }

  private serial<T>(run: (context: { input: NodeJS.ReadableStream; output: NodeJS.WritableStream }) => Promise<T>): Promise<T> {
    const result = this.tail
      .then(async () => {
        this.io.prompting?.(true)
        try {
          return await run({ input: this.io.input, output: this.io.output })
        } finally {
          this.io.prompting?.(false)
        }
      })
      .catch((error: unknown) => {
        throw CordageError.is(error) ? error : dismissed(this.io, error)
      })
    this.tail = result.catch(() => {})
    return result
  }
}

/** Terminal rendering of a markdown plan: headings bold, list markers and code dimmed. */
export function renderMarkdown(markdown: string, output: Output): string {
  // Without colours, backticks stay: they are the only marker left.
  const inline = (text: string) => (output.color ? text.replace(/`([^`]+)`/g, (_match, code: string) => output.style('yellow', code)) : text)
  return markdown
    .split('\n')
    .map((line) => {
      const heading = /^(#{1,6})\s+(.*)$/.exec(line)
      if (heading) return output.style('bold', heading[2]!)
      const item = /^(\s*)([-*+]|\d+[.)])\s+(.*)$/.exec(line)
      if (item) return `${item[1]}${output.style('cyan', item[2]!.replace(/^[-*+]$/, '•'))} ${inline(item[3]!)}`
      return inline(line)
    })
    .join('\n')
}
