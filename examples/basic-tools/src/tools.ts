import type { Context } from 'cordis'
import Schema from 'schemastery'
import { defineTool } from '@cordage/core'

// Schemas as constants give `execute` and `render` fully inferred types.
const wordCountParameters = Schema.object({ text: Schema.string().required().description('The text to measure.') })
const wordCountValue = Schema.object({
  words: Schema.natural().required(),
  lines: Schema.natural().required(),
  characters: Schema.natural().required(),
  longest: Schema.string().required(),
})

/** Word statistics for a text: a typed value, and the line a model would read. */
export const wordCount = defineTool({
  name: 'word_count',
  description: 'Counts words, lines and characters in a text.',
  parameters: wordCountParameters,
  output: {
    schema: wordCountValue,
    render: (_args, value) => [
      { type: 'text', text: `${value.words} words, ${value.lines} lines, ${value.characters} characters (longest word: "${value.longest}")` },
    ],
  },
  concurrency: 'parallel',
  execute({ text }) {
    const words = text.split(/\s+/).filter(Boolean)
    const longest = words.reduce((best, word) => (word.length > best.length ? word : best), '')
    return { words: words.length, lines: text ? text.split('\n').length : 0, characters: [...text].length, longest }
  },
})

const sortParameters = Schema.object({
  numbers: Schema.array(Schema.number()).required(),
  order: Schema.union(['asc', 'desc']).default('asc'),
})
const sortValue = Schema.array(Schema.number())

/** Sorts numbers; its value is an array root. */
export const sortNumbers = defineTool({
  name: 'sort_numbers',
  description: 'Sorts a list of numbers.',
  parameters: sortParameters,
  output: {
    schema: sortValue,
    render: (args, value) => [{ type: 'text', text: `${args.order === 'asc' ? 'ascending' : 'descending'}: ${value.join(', ')}` }],
  },
  concurrency: 'parallel',
  execute: ({ numbers, order }) => [...numbers].sort((a, b) => (order === 'asc' ? a - b : b - a)),
})

/** A Cordis plugin that registers both tools; unloading it unregisters them. */
export const name = 'basic-tools'
export const inject = ['tools']
export function apply(ctx: Context) {
  ctx.tools.register(wordCount)
  ctx.tools.register(sortNumbers)
}
