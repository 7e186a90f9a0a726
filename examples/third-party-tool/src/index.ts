import type { Context } from 'cordis'
import Schema from 'schemastery'
import { CordageError, defineTool, strictConfig, type ToolDefinition } from '@cordage/core'
// Types only (erased from dist/): `ctx.tools` is the registry the host application loads.
import type { ToolRegistry } from '@cordage/registry'

export const name = 'word-count'
export const inject = ['tools']

/** How `word_count` counts. */
export interface Config {
  /** How many of the most frequent words the value lists. */
  top: number
  /** Whether `The` and `the` are different words. */
  caseSensitive: boolean
  /** Texts longer than this (in characters) are refused rather than scanned. */
  maxCharacters: number
}

export const Config: Schema<Partial<Config>, Config> = strictConfig(
  name,
  Schema.object({
    top: Schema.natural().max(100).default(5).description('How many of the most frequent words the value lists.'),
    caseSensitive: Schema.boolean().default(false).description('Whether "The" and "the" are different words.'),
    maxCharacters: Schema.natural().min(1).default(1_000_000).description('Longer texts are refused with TEXT_TOO_LONG.'),
  }),
)

/** A text longer than `maxCharacters`: the model is told the limit so it can split the text. */
export class TextTooLongError extends CordageError {
  constructor(length: number, limit: number) {
    super('TEXT_TOO_LONG', `the text has ${length} characters; word_count takes at most ${limit} (split it and add the counts)`)
    this.name = 'TextTooLongError'
  }
}

const parameters = Schema.object({
  text: Schema.string().required().description('The text to measure.'),
})

const value = Schema.object({
  words: Schema.natural().required(),
  lines: Schema.natural().required(),
  characters: Schema.natural().required(),
  frequent: Schema.array(Schema.object({ word: Schema.string().required(), count: Schema.natural().required() })).required(),
})

// Letters, digits, apostrophes and hyphens inside a word; punctuation around it does not count.
const WORD = /[\p{L}\p{N}]+(?:['’-][\p{L}\p{N}]+)*/gu

/** The `word_count` tool for one configuration. */
export function wordCountTool(config: Config): ToolDefinition {
  return defineTool({
    name: 'word_count',
    description: `Counts the words, lines and characters of a text and lists its ${config.top} most frequent words.`,
    parameters,
    output: {
      schema: value,
      render: (_args, result) => {
        const frequent = result.frequent.map((entry) => `${entry.word} (${entry.count})`).join(', ')
        return [
          {
            type: 'text',
            text: `${result.words} words, ${result.lines} lines, ${result.characters} characters${frequent ? `; most frequent: ${frequent}` : ''}`,
          },
        ]
      },
    },
    concurrency: 'parallel',
    execute({ text }) {
      const characters = [...text].length
      if (characters > config.maxCharacters) throw new TextTooLongError(characters, config.maxCharacters)
      const counts = new Map<string, number>()
      let words = 0
      for (const [match] of text.matchAll(WORD)) {
        const word = config.caseSensitive ? match : match.toLowerCase()
        counts.set(word, (counts.get(word) ?? 0) + 1)
        words++
      }
      // Ties keep a stable, alphabetical order so the value does not depend on the text's word order.
      const frequent = [...counts]
        .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
        .slice(0, config.top)
        .map(([word, count]) => ({ word, count }))
      return { words, lines: text === '' ? 0 : text.split(/\r\n|\r|\n/).length, characters, frequent }
    },
  })
}

/** Registers `word_count`; unloading the plugin unregisters it. */
export function apply(ctx: Context, config: Config): void {
  const tools: ToolRegistry = ctx.tools
  tools.register(wordCountTool(config))
}

export default { name, inject, Config, apply }
