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
