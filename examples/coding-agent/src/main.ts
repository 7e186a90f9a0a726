// Copies the fixture project to a temporary directory, runs `cordage run` there (offline on the bundled
// cassette, or live with --live), then checks the outcome itself: the project's tests must pass.
import { spawnSync } from 'node:child_process'
import { copyFileSync, cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { cordageBin, exampleDir } from './paths.js'
import { runTests, summarizeSession } from './verify.js'

const TASK = 'The test suite of this project fails. Find the cause, fix it with the smallest correct change, and confirm the tests pass.'

const argv = process.argv.slice(2)
const live = argv.includes('--live')
const keep = argv.includes('--keep')
// A relative --record path is relative to where `pnpm start` was typed (pnpm sets INIT_CWD).
const recordArg = argv.find((arg) => arg.startsWith('--record='))?.slice('--record='.length)
const record = recordArg && resolve(process.env.INIT_CWD ?? process.cwd(), recordArg)
// Where to keep a copy of the session after a successful run (the root's `pnpm start` keeps it in the
// workspace's `.cordage/sessions`, so `cordage serve` there shows it in the studio).
const saveArg = argv.find((arg) => arg.startsWith('--save-session='))?.slice('--save-session='.length)
const saveDir = saveArg && resolve(process.env.INIT_CWD ?? process.cwd(), saveArg)
// Another recording to replay instead of the bundled one (used by the example's own tests).
const cassette = resolve(argv.find((arg) => arg.startsWith('--cassette='))?.slice('--cassette='.length) ?? join(exampleDir, 'cassette.json'))
const say = (text: string) => console.log(`\n== ${text}`)

const keys = ['OPENAI_API_KEY', 'DEEPSEEK_API_KEY', 'ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN', 'OPENAI_BASE_URL']
if (live && !keys.some((key) => process.env[key])) {
  console.error('--live needs OPENAI_API_KEY, DEEPSEEK_API_KEY or ANTHROPIC_API_KEY (or OPENAI_BASE_URL for a local server)')
  process.exit(2)
}

const project = mkdtempSync(join(tmpdir(), 'cordage-coding-agent-'))
cpSync(join(exampleDir, 'fixture'), project, { recursive: true })
cpSync(join(exampleDir, 'cordage.yml'), join(project, 'cordage.yml'))
let failed = false
try {
  say(`project copied to ${project}`)
  const before = runTests(project)
  console.log(`before: ${before.summary}`)
  if (before.ok) throw new Error("the fixture's tests already pass; there is nothing for the agent to fix")

  const model = live ? (record ? ['--record', record] : []) : ['--cassette', cassette]
  say(`cordage run ${live ? '(live model)' : '(offline: recorded cassette)'}`)
  const run = spawnSync(process.execPath, [cordageBin(), 'run', ...model, TASK], { cwd: project, stdio: 'inherit', env: process.env })
  if (run.status !== 0) throw new Error(`cordage run exited with ${run.status ?? run.signal}`)

  say('what the agent did')
  const sessions = join(project, '.cordage', 'sessions')
  const [file] = readdirSync(sessions).filter((name) => name.endsWith('.jsonl'))
  const session = summarizeSession(readFileSync(join(sessions, file), 'utf8'))
  for (const line of session.lines) console.log(line)
  console.log(
    keep ? `replay it: pnpm exec cordage replay ${join(sessions, file)}` : '(run with --keep to keep the project and replay the session with `cordage replay`)',
  )

  say('checking the outcome')
  const after = runTests(project)
  console.log(`after: ${after.summary}`)
  const fixed = readFileSync(join(project, 'src', 'cart.js'), 'utf8')
  if (!after.ok) throw new Error('the tests still fail: the fix did not land')
  if (!session.edited.some((path) => path.endsWith('src/cart.js'))) throw new Error('the agent never edited src/cart.js through the edit tool')
  if (session.valuesLeaked) throw new Error('the session log contains a canonical value; it must hold rendered content only')
  console.log(
    `src/cart.js now reads: ${fixed
      .split('\n')
      .find((line) => line.includes('roundCents(amount'))
      ?.trim()}`,
  )
  if (saveDir) {
    mkdirSync(saveDir, { recursive: true })
    copyFileSync(join(sessions, file), join(saveDir, file))
    console.log(
      `\nthe session is in ${saveDir}: \`pnpm exec cordage serve\` shows it in the studio, \`pnpm exec cordage replay --html ${file.replace(/\.jsonl$/, '')}\` exports it`,
    )
  }
  console.log('\nOK: the agent fixed the bug and the tests pass.')
} catch (error) {
  failed = true
  console.error(`\nFAILED: ${(error as Error).message}`)
} finally {
  if (keep || failed) console.log(`(project kept at ${project})`)
  else rmSync(project, { recursive: true, force: true })
}
process.exit(failed ? 1 : 0)
