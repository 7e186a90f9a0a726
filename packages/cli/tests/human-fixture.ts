import { readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { echoPlugin, project } from './helpers.js'

/** A project whose `echo` needs approval (policy `ask`) and which loads todo and interaction. */
export function humanProject(turns: unknown[], interaction: object = {}): string {
  const config = [
    'plugins:',
    '  ./echo.mjs: {}',
    '  "@cordage/plugin-policy":',
    '    rules:',
    '      - { tool: echo, action: ask, reason: echo is loud }',
    '  "@cordage/plugin-todo": {}',
    `  "@cordage/plugin-interaction": ${JSON.stringify(interaction)}`,
    '',
  ].join('\n')
  return project({ 'cordage.yml': config, 'echo.mjs': echoPlugin, 'tape.json': JSON.stringify({ version: 1, model: 'test', turns }) })
}

/** A cassette turn calling one tool. */
export function call(id: string, name: string, args: object) {
  return { toolCalls: [{ id, name, arguments: args }] }
}

export const question = {
  questions: [
    { id: 'db', question: 'Which database?', options: [{ label: 'Postgres', description: 'relational' }, { label: 'SQLite' }] },
    { id: 'features', question: 'Which features?', multiSelect: true, options: [{ label: 'A' }, { label: 'B' }] },
  ],
}

/** The tool results recorded in the newest session under `dir`, as the model saw them. */
export function sessionToolResults(dir: string): Array<{ name: string; isError: boolean; text: string; code?: string }> {
  const sessions = join(dir, '.cordage', 'sessions')
  const file = readdirSync(sessions)
    .filter((name) => name.endsWith('.jsonl'))
    .sort()
    .at(-1)!
  return readFileSync(join(sessions, file), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line))
    .filter((event) => event.type === 'tool/result')
    .map((event) => ({
      name: event.data.name,
      isError: event.data.isError,
      text: event.data.content[0].text,
      ...(event.data.error?.code && { code: event.data.error.code }),
    }))
}
