import Schema from 'schemastery'
import { defineTool, type ToolDefinition } from '@cordage/core'
import { TextTooLongError } from './errors.js'

const parameters = Schema.object({
  text: Schema.string().required().description('The text to convert.'),
})

// The canonical value: what programs (Code Mode, other plugins, MCP clients) receive, validated and frozen.
const value = Schema.object({
  text: Schema.string().required(),
  characters: Schema.natural().required(),
})

/** The tool's work, free of Cordis and the registry (the benchmark's baseline). */
export function upperCase(text: string, maxCharacters: number): { text: string; characters: number } {
  // Characters are code points, so an emoji counts once.
  const characters = [...text].length
  if (characters > maxCharacters) throw new TextTooLongError(characters, maxCharacters)
  return { text: text.toUpperCase(), characters }
}

/** The `__tool__` tool for one configuration. */
export function __camel__Tool(config: { maxCharacters: number }): ToolDefinition {
  return defineTool({
    name: '__tool__',
    description: `Returns a text in upper case and its length in characters (at most ${config.maxCharacters}).`,
    parameters,
    output: {
      schema: value,
      // What the model sees: a pure function of the arguments and the value.
      render: (_args, result) => [{ type: 'text', text: `${result.text} (${result.characters} characters)` }],
    },
    // Nothing shared is touched, so calls may run side by side.
    concurrency: 'parallel',
    execute: ({ text }) => upperCase(text, config.maxCharacters),
  })
}
