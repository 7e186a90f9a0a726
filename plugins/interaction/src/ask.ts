import type { Context } from 'cordis'
import Schema from 'schemastery'
import { defineTool, type ToolDefinition } from '@cordage/core'
import type { Answer, Question } from '@cordage/services'
import { InteractionUnavailableError, InvalidAnswersError, InvalidQuestionsError } from './errors.js'

const QuestionSchema = Schema.object({
  id: Schema.string().min(1).max(100).required().description('Your id for the question; its answer carries it back.'),
  question: Schema.string().min(1).max(2000).required().description('The complete question, ending with "?".'),
  header: Schema.string().max(40).description('A very short title shown above the question, e.g. "Database".'),
  options: Schema.array(
    Schema.object({
      label: Schema.string().min(1).max(200).required().description('What the user picks (1-5 words); put a recommended option first and add "(Recommended)".'),
      description: Schema.string().max(1000).description('What choosing it means.'),
    }),
  )
    .max(20)
    .required()
    .description('2-4 concrete choices is best. The user can always type their own answer instead; [] asks for free text only.'),
  multiSelect: Schema.boolean().description('Let the user pick several options.'),
})

const Parameters = Schema.object({
  questions: Schema.array(QuestionSchema).max(10).required().description('1-4 questions, asked in order.'),
})

const Output = Schema.object({
  answers: Schema.array(
    Schema.object({
      id: Schema.string().required(),
      selected: Schema.array(Schema.string()).required().description('Labels of the chosen options.'),
      custom: Schema.string().description('Free text the user typed: it overrides selected for a single choice, adds to it for several.'),
    }),
  ).required(),
})

/** Rejects repeated ids and labels (the schema cannot say "unique by key"). */
function checkQuestions(questions: readonly Question[]): void {
  if (!questions.length) throw new InvalidQuestionsError('ask_user_question requires at least one question')
  const ids = new Set<string>()
  for (const question of questions) {
    if (ids.has(question.id)) throw new InvalidQuestionsError(`duplicate question id "${question.id}"; give each question its own id`)
    ids.add(question.id)
    const labels = new Set<string>()
    for (const option of question.options) {
      if (labels.has(option.label)) throw new InvalidQuestionsError(`question "${question.id}" repeats the option "${option.label}"`)
      labels.add(option.label)
    }
  }
}

/** One answer per question, in question order, each fitting its question; throws `INVALID_ANSWERS`. */
export function matchAnswers(questions: readonly Question[], answers: readonly Answer[]): Answer[] {
  if (!Array.isArray(answers)) throw new InvalidAnswersError('expected a list of answers')
  return questions.map((question) => {
    const answer = answers.find((candidate) => candidate?.id === question.id)
    if (!answer || !Array.isArray(answer.selected)) throw new InvalidAnswersError(`no answer for question "${question.id}"`)
    const labels = new Set(question.options.map((option) => option.label))
    const unknown = answer.selected.find((label: unknown) => typeof label !== 'string' || !labels.has(label))
    if (unknown !== undefined) throw new InvalidAnswersError(`"${unknown}" is not an option of question "${question.id}"`)
    if (!question.multiSelect && answer.selected.length > 1)
      throw new InvalidAnswersError(`question "${question.id}" takes one option, got ${answer.selected.length}`)
    const custom = typeof answer.custom === 'string' && answer.custom.trim() ? answer.custom.trim() : undefined
    if (!answer.selected.length && custom === undefined) throw new InvalidAnswersError(`the answer to "${question.id}" is empty`)
    const selected = [...new Set<string>(answer.selected)]
    return custom === undefined ? { id: question.id, selected } : { id: question.id, selected, custom }
  })
}

/** `ask_user_question`: puts questions to the user through `ctx.interaction` and returns their answers. */
export function askTool(ctx: Context): ToolDefinition {
  return defineTool({
    name: 'ask_user_question',
    description:
      'Ask the user one or more multiple-choice questions when a decision is genuinely theirs (a preference, an ambiguous requirement, a trade-off) and you cannot find the answer yourself. The call waits until they answer.',
    parameters: Parameters,
    output: {
      schema: Output,
      render: (_args, value) => [{ type: 'text', text: JSON.stringify(value) }],
    },
    // Asking changes nothing, so plan mode (and anything else reading the hints) lets it run.
    annotations: { readOnlyHint: true },
    execute: async (args, exec) => {
      const questions = args.questions as Question[]
      checkQuestions(questions)
      const interaction = ctx.get('interaction')
      if (!interaction) throw new InteractionUnavailableError('ask_user_question')
      const answers = matchAnswers(questions, await interaction.ask(questions, exec.signal))
      // The inferred output type makes `custom` required; the schema (and ajv) treat it as optional.
      return { answers } as { answers: Array<Answer & { custom: string }> }
    },
  })
}
