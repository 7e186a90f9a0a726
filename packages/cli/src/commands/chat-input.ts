import { createInterface } from 'node:readline'

/** The user's messages to `cordage chat`, one per line, until EOF, `/exit`-style commands aside. */
export interface ChatInput extends AsyncIterable<string> {
  close(): void
}

/**
 * Reads chat messages. On a terminal a fresh readline asks for each line and is closed before the
 * agent runs, so prompts shown during the run (questions, approvals) own the keyboard alone: a
 * readline left open would also take those keys and turn them into chat messages. Ctrl-C or Ctrl-D at
 * the chat prompt ends the input. From a pipe, lines are read by one readline, as they arrive.
 */
export function chatInput(stdin: NodeJS.ReadableStream, interactive: boolean, prompt: string): ChatInput {
  if (!interactive) {
    const lines = createInterface({ input: stdin, terminal: false })
    return { [Symbol.asyncIterator]: () => lines[Symbol.asyncIterator](), close: () => lines.close() }
  }
  const state: { closed: boolean; current?: ReturnType<typeof createInterface> } = { closed: false }
  async function* read(): AsyncGenerator<string> {
    while (!state.closed) {
      const lines = createInterface({ input: stdin, output: process.stdout, terminal: true })
      state.current = lines
      const line = await new Promise<string | undefined>((resolve) => {
        lines.once('close', () => resolve(undefined))
        lines.once('SIGINT', () => lines.close())
        lines.question(prompt, resolve)
      })
      lines.close()
      state.current = undefined
      if (line === undefined) return
      yield line
    }
  }
  return {
    [Symbol.asyncIterator]: read,
    close() {
      state.closed = true
      state.current?.close()
    },
  }
}
