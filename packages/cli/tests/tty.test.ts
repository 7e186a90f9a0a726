import { afterEach, describe, expect, it } from 'vitest'
import { call, humanProject, question, sessionToolResults } from './human-fixture.js'
import { hasTmux, Terminal } from './tmux.js'

function results(dir: string): Array<{ name: string; text: string; code?: string }> {
  return sessionToolResults(dir).map(({ name, text, code }) => ({ name, text, ...(code && { code }) }))
}

const terminals: Terminal[] = []
function open(dir: string, args: string[]): Terminal {
  const terminal = new Terminal(dir, args)
  terminals.push(terminal)
  return terminal
}
afterEach(() => {
  for (const terminal of terminals.splice(0)) terminal.close()
})

describe.skipIf(!hasTmux)('the CLI as the human side, on a real terminal (tmux)', { timeout: 120_000 }, () => {
  it('run: arrow keys answer questions, own text is typed, and "always" approves the rest of the session', async () => {
    const dir = humanProject([
      call('c1', 'ask_user_question', question),
      {
        toolCalls: [
          { id: 'c2', name: 'echo', arguments: { text: 'one' } },
          { id: 'c3', name: 'echo', arguments: { text: 'two' } },
        ],
      },
      call('c4', 'echo', { text: 'three' }),
      { text: 'finished' },
    ])
    const terminal = open(dir, ['run', '--cassette', 'tape.json', 'go'])
    await terminal.waitFor(/❯ Postgres/)
    terminal.keys('Down', 'Enter')
    await terminal.waitFor(/Which features\?/)
    terminal.keys('Space', 'Down', 'Down', 'Space', 'Enter')
    await terminal.waitFor(/Your answer:/)
    terminal.keys('-l', 'and C')
    terminal.keys('Enter')
    const prompt = await terminal.waitFor(/Allow this call\?/)
    expect(prompt).toContain('? echo one (echo is loud)')
    terminal.keys('a', 'Enter')
    expect(await terminal.exitCode()).toBe(0)
    const screen = terminal.screen()
    expect(screen.match(/Allow this call\?/g)).toHaveLength(1)
    expect(screen).toContain('finished')
    expect(results(dir)).toEqual([
      { name: 'ask_user_question', text: '{"answers":[{"id":"db","selected":["SQLite"]},{"id":"features","selected":["A"],"custom":"and C"}]}' },
      { name: 'echo', text: 'echo: one' },
      { name: 'echo', text: 'echo: two' },
      { name: 'echo', text: 'echo: three' },
    ])
  })

  it('run: "n" denies one call; Ctrl-C at a prompt stops the run (exit 130) and runs nothing more', async () => {
    const dir = humanProject([
      call('c1', 'echo', { text: 'one' }),
      call('c2', 'ask_user_question', question),
      call('c3', 'echo', { text: 'never' }),
      { text: 'never' },
    ])
    const terminal = open(dir, ['run', '--cassette', 'tape.json', 'go'])
    await terminal.waitFor(/Allow this call\?/)
    terminal.keys('n', 'Enter')
    await terminal.waitFor(/❯ Postgres/)
    terminal.keys('C-c')
    expect(await terminal.exitCode()).toBe(130)
    expect(results(dir)).toEqual([
      { name: 'echo', text: 'Error: the user did not approve this call (echo is loud)', code: 'DENIED' },
      { name: 'ask_user_question', text: 'Error: the user dismissed the prompt (Ctrl-C) without answering', code: 'ABORTED' },
    ])
  })

  it('chat --plan: the plan is shown rendered; "Keep planning" returns feedback, "Approve" leaves plan mode', async () => {
    const dir = humanProject(
      [
        call('c1', 'exit_plan_mode', { plan: '# Echo plan\n- echo `one`' }),
        call('c2', 'exit_plan_mode', { plan: '# Echo plan v2\n- echo `two`' }),
        call('c3', 'echo', { text: 'two' }),
        { text: 'done' },
      ],
      { writeTools: ['echo'] },
    )
    const terminal = open(dir, ['chat', '--plan', '--yes', '--cassette', 'tape.json'])
    await terminal.waitFor(/›/)
    terminal.keys('-l', 'make a plan')
    terminal.keys('Enter')
    const first = await terminal.waitFor(/Approve this plan/)
    expect(first).toMatch(/^Echo plan$/m)
    expect(first).toMatch(/^• echo `one`$/m)
    terminal.keys('Down', 'Enter')
    await terminal.waitFor(/What should change\?/)
    terminal.keys('-l', 'use two')
    terminal.keys('Enter')
    await terminal.waitFor(/Echo plan v2[\s\S]*Approve this plan/)
    terminal.keys('Enter')
    await terminal.waitFor(/completed · 4 turns/)
    // Typing into the chat prompt again works: the prompts did not leave keys behind.
    terminal.keys('-l', '/exit')
    terminal.keys('Enter')
    expect(await terminal.exitCode()).toBe(0)
    expect(results(dir)).toEqual([
      { name: 'exit_plan_mode', text: 'Error: The user chose to keep planning; their feedback: use two', code: 'PLAN_REJECTED' },
      { name: 'exit_plan_mode', text: 'Plan approved: plan mode exited; carry out the plan starting with your next step.' },
      { name: 'echo', text: 'echo: two' },
    ])
  })

  it('chat: Ctrl-C at a question stops the turn, not the chat; the next message runs normally', async () => {
    const dir = humanProject([call('c1', 'ask_user_question', question), call('c2', 'echo', { text: 'never' }), { text: 'back again' }], {})
    const terminal = open(dir, ['chat', '--yes', '--cassette', 'tape.json'])
    await terminal.waitFor(/›/)
    terminal.keys('-l', 'first')
    terminal.keys('Enter')
    await terminal.waitFor(/❯ Postgres/)
    terminal.keys('C-c')
    await terminal.waitFor(/aborted · 1 turn/)
    terminal.keys('-l', 'second')
    terminal.keys('Enter')
    await terminal.waitFor(/back again/)
    terminal.keys('-l', '/exit')
    terminal.keys('Enter')
    expect(await terminal.exitCode()).toBe(0)
    // The aborted turn ran nothing after the question; the next message's turn continued the script.
    expect(results(dir)).toEqual([
      { name: 'ask_user_question', text: 'Error: the user dismissed the prompt (Ctrl-C) without answering', code: 'ABORTED' },
      { name: 'echo', text: 'echo: never' },
    ])
  })
})
