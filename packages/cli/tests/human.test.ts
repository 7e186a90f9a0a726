import { readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { cordage, echoPlugin, project } from './helpers.js'
import { call, humanProject, question, sessionToolResults as toolResults } from './human-fixture.js'

const turns = [call('c1', 'echo', { text: 'hi' }), call('c2', 'ask_user_question', question), { text: 'finished' }]

describe('cordage run without a terminal (headless)', { timeout: 90_000 }, () => {
  it('fails approvals with APPROVAL_UNAVAILABLE and questions with INTERACTION_UNAVAILABLE, never waiting', async () => {
    const dir = humanProject(turns)
    const run = await cordage(['run', '--cassette', 'tape.json', 'go'], { cwd: dir })
    expect(run.code).toBe(0)
    const [echo, ask] = toolResults(dir)
    expect(echo).toMatchObject({ name: 'echo', isError: true, code: 'DENIED' })
    expect(echo!.text).toContain(
      'APPROVAL_UNAVAILABLE: "echo" needs approval (echo is loud), but there is no terminal to ask on; rerun with --yes to allow such calls or --no to deny them',
    )
    expect(ask).toMatchObject({ name: 'ask_user_question', isError: true, code: 'INTERACTION_UNAVAILABLE' })
  })

  it('--yes approves and --no denies without asking', async () => {
    const yesDir = humanProject(turns)
    const yes = await cordage(['run', '--yes', '--cassette', 'tape.json', 'go'], { cwd: yesDir })
    expect(yes.code).toBe(0)
    expect(toolResults(yesDir)[0]).toEqual({ name: 'echo', isError: false, text: 'echo: hi' })
    const noDir = humanProject(turns)
    await cordage(['run', '--no', '--cassette', 'tape.json', 'go'], { cwd: noDir })
    expect(toolResults(noDir)[0]).toMatchObject({ isError: true, code: 'DENIED', text: 'Error: the user did not approve this call (echo is loud)' })
  })

  it('rejects --yes with --no', async () => {
    const run = await cordage(['run', '--yes', '--no', 'go'], { cwd: humanProject(turns) })
    expect(run.code).not.toBe(0)
    expect(run.stderr).toContain('--yes and --no contradict each other')
  })

  it('--plan denies writing tools until the plan is approved (--yes approves it)', async () => {
    const plan = [
      call('c1', 'echo', { text: 'early' }),
      call('c2', 'exit_plan_mode', { plan: '# Echo plan\n1. echo' }),
      call('c3', 'echo', { text: 'later' }),
      { text: 'done' },
    ]
    const dir = humanProject(plan, { writeTools: ['echo'] })
    const run = await cordage(['run', '--plan', '--yes', '--cassette', 'tape.json', 'go'], { cwd: dir })
    expect(run.code).toBe(0)
    expect(run.stderr).toContain('# Echo plan')
    const results = toolResults(dir)
    expect(results[0]).toMatchObject({ isError: true, code: 'DENIED' })
    expect(results[0]!.text).toMatch(/^Error: plan mode is active: "echo" can change files or run commands/)
    expect(results[1]).toMatchObject({ isError: false, text: 'Plan approved: plan mode exited; carry out the plan starting with your next step.' })
    expect(results[2]).toMatchObject({ isError: false, text: 'echo: later' })
    const system = JSON.parse(readFileSync(join(dir, '.cordage/sessions', readdirSync(join(dir, '.cordage/sessions'))[0]!), 'utf8').split('\n')[1]!)
    expect(system).toMatchObject({ type: 'system/message' })
    expect(system.data.content).toContain('Plan mode is active')
  })

  it('--plan without the interaction plugin is a usage error', async () => {
    const dir = project({
      'cordage.yml': 'plugins:\n  ./echo.mjs: {}\n',
      'echo.mjs': echoPlugin,
      'tape.json': JSON.stringify({ version: 1, turns: [{ text: 'x' }] }),
    })
    const run = await cordage(['run', '--plan', '--cassette', 'tape.json', 'go'], { cwd: dir })
    expect(run.code).not.toBe(0)
    expect(run.stderr).toContain('--plan needs @cordage/plugin-interaction: add it to cordage.yml')
  })

  it('prints the todo list when it changes, and JSON lines with --json', async () => {
    const todo = (status: string) =>
      call(`t-${status}`, 'todo_write', {
        todos: [
          { id: '1', content: 'Write the test', status },
          { id: '2', content: 'Fix it', status: 'pending' },
        ],
      })
    const dir = humanProject([todo('in_progress'), todo('in_progress'), todo('completed'), { text: 'ok' }])
    const run = await cordage(['run', '--cassette', 'tape.json', 'go'], { cwd: dir })
    expect(run.stdout.match(/todo: /g)).toHaveLength(2)
    expect(run.stdout).toContain('  todo: 0 done, 1 in progress, 1 pending\n    [~] Write the test\n    [ ] Fix it\n')
    expect(run.stdout).toContain('  todo: 1 done, 0 in progress, 1 pending\n    [x] Write the test\n    [ ] Fix it\n')
    const json = await cordage(['run', '--json', '--cassette', 'tape.json', 'go'], { cwd: dir })
    const todos = json.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
      .filter((event) => event.type === 'todo')
    expect(todos.map((event) => event.counts)).toEqual([
      { pending: 1, inProgress: 1, completed: 0 },
      { pending: 1, inProgress: 0, completed: 1 },
    ])
  })
})
