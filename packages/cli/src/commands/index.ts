import { callCommand } from './call.js'
import { chatCommand } from './chat.js'
import { mcpServeCommand } from './mcp-serve.js'
import type { Command } from './command.js'
import { replayCommand } from './replay.js'
import { runCommand } from './run.js'
import { serveCommand } from './serve.js'
import { toolsCommand } from './tools.js'
import { workerCommand } from './worker.js'

export type { Command, CommandInput } from './command.js'

/**
 * The command table, in help order. To add a command, write `src/commands/<name>.ts` exporting a
 * `Command` and list it here; a multi-word name (`'mcp serve'`) makes a subcommand.
 */
export const commands: readonly Command[] = [runCommand, chatCommand, toolsCommand, callCommand, replayCommand, serveCommand, mcpServeCommand, workerCommand]

/** The command whose words start `argv` (the longest match), and how many words it used. */
export function findCommand(argv: readonly string[], table: readonly Command[] = commands): { command: Command; words: number } | undefined {
  let best: { command: Command; words: number } | undefined
  for (const command of table) {
    const words = command.name.split(' ')
    if (words.every((word, index) => argv[index] === word) && (!best || words.length > best.words)) best = { command, words: words.length }
  }
  return best
}
