// Runs every vitest project and ends with one line `N passed, N failed` (from the JSON reporter).
import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync, rmSync } from 'node:fs'

const output = '.test-results.json'
rmSync(output, { force: true })
const run = spawnSync('pnpm', ['exec', 'vitest', 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${output}`, ...process.argv.slice(2)], {
  stdio: 'inherit',
})
let passed = 0
let failed = 0
if (existsSync(output)) {
  const report = JSON.parse(readFileSync(output, 'utf8'))
  passed = report.numPassedTests
  failed =
    report.numFailedTests + (report.numRuntimeErrorTestSuites ?? 0) + (report.numFailedTestSuites && !report.numFailedTests ? report.numFailedTestSuites : 0)
} else {
  failed = 1
}
const code = run.status !== 0 || failed > 0 || passed === 0 ? 1 : 0
console.log(`${passed} passed, ${failed} failed`)
process.exit(code)
