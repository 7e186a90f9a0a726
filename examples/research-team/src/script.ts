import { contentText } from '@cordage/core'
import type { Message } from '@cordage/agent'
import type { ScriptStep } from '@cordage/testing'

/** The areas the lead splits the survey into. */
export const AREAS = ['auth', 'billing', 'search']

/** What each researcher must report (an object-rooted JSON Schema: structured_output's parameters). */
export const SUMMARY_SCHEMA = {
  type: 'object',
  properties: {
    area: { type: 'string' },
    files: { type: 'array', items: { type: 'string' } },
    todos: { type: 'array', items: { type: 'string' } },
  },
  required: ['area', 'files', 'todos'],
  additionalProperties: false,
}

/** The program the lead writes: three subagents in parallel, each returning a validated summary. */
export const PROGRAM = `
const areas = ${JSON.stringify(AREAS)}
const schema = ${JSON.stringify(SUMMARY_SCHEMA)}
const summaries = await Promise.all(areas.map((area) => agents.run({
  prompt: 'Survey src/' + area + ': list its files and every TODO line, then report.',
  tools: ['glob', 'grep'],
  outputSchema: schema,
  label: 'survey ' + area,
})))
return { areas: summaries.length, todos: summaries.flatMap((summary) => summary.todos.map((todo) => summary.area + ': ' + todo)), files: summaries.reduce((sum, summary) => sum + summary.files.length, 0) }`

function lastToolText(messages: Message[]): string {
  const last = messages.at(-1)
  return last?.role === 'tool' ? contentText(last.content) : ''
}

/**
 * One researcher's conversation: glob its area, grep for TODOs, then report what the tools returned —
 * the summary is built from the real tool output, so a broken tool shows in the result.
 */
function researcher(area: string): ScriptStep[] {
  let files: string[] = []
  return [
    { toolCalls: [{ name: 'glob', arguments: { pattern: `src/${area}/**` } }] },
    (request) => {
      files = lastToolText(request.messages)
        .split('\n')
        .filter((line) => line.startsWith('src/'))
      return { toolCalls: [{ name: 'grep', arguments: { pattern: 'TODO', path: `src/${area}` } }] }
    },
    (request) => {
      const todos = lastToolText(request.messages)
        .split('\n')
        .map((line) => /TODO: (.*)$/.exec(line)?.[1])
        .filter((todo): todo is string => !!todo)
      return { toolCalls: [{ name: 'structured_output', arguments: { area, files, todos } }] }
    },
  ]
}

/** The lead's turns, then one route per researcher (keyed by the start of its prompt). */
export function script(): { turns: ScriptStep[]; routes: Record<string, ScriptStep[]> } {
  return {
    turns: [
      { text: 'I will split the survey across three researchers.', toolCalls: [{ id: 'call_workflow', name: 'workflow', arguments: { code: PROGRAM } }] },
      (request) => {
        const shown = lastToolText(request.messages)
        const result = JSON.parse(shown.slice(shown.indexOf('Return value:\n') + 'Return value:\n'.length)) as { todos: string[]; files: number }
        return { text: `Merged report: ${result.files} files surveyed; open TODOs:\n${result.todos.map((todo) => `- ${todo}`).join('\n')}` }
      },
    ],
    routes: Object.fromEntries(AREAS.map((area) => [`Survey src/${area}:`, researcher(area)])),
  }
}
