// Public API reports: `packages/<name>/<name>.api.md` for the packages third parties build on, made by
// API Extractor from the built declarations, followed by the package's `declare module` augmentations
// (the Context properties and events it adds), which API Extractor leaves out. `node
// scripts/api-report.mjs` fails when a package's public surface differs from its committed report
// (printing the difference); `--update` rewrites the reports. Run `pnpm build` first (`pnpm api:check`
// and `pnpm api:update` do).
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { Extractor, ExtractorConfig } from '@microsoft/api-extractor'

/** The packages whose exports are a contract with code outside this repository. */
export const REPORTED = ['core', 'registry', 'services', 'testing', 'agent']

const root = process.cwd()
const update = process.argv.includes('--update')
const temporary = mkdtempSync(join(tmpdir(), 'cordage-api-'))
const problems = []

// The compiler settings the declarations were built with, for API Extractor's own compiler (which
// reads only the entry point and what it reaches, so nothing is emitted or composed).
const compilerOptions = {
  ...JSON.parse(readFileSync(join(root, 'tsconfig.base.json'), 'utf8')).compilerOptions,
  composite: false,
  declaration: false,
  declarationMap: false,
  sourceMap: false,
}

function configFor(name) {
  const projectFolder = join(root, 'packages', name)
  const entry = join(projectFolder, 'dist/index.d.ts')
  if (!existsSync(entry)) throw new Error(`${relative(root, entry)} is missing: run \`pnpm build\` first`)
  mkdirSync(join(temporary, name, 'report'), { recursive: true })
  return ExtractorConfig.prepare({
    configObjectFullPath: join(projectFolder, 'api-extractor.json'),
    packageJsonFullPath: join(projectFolder, 'package.json'),
    configObject: {
      projectFolder,
      mainEntryPointFilePath: '<projectFolder>/dist/index.d.ts',
      compiler: { overrideTsconfig: { compilerOptions, files: [entry] } },
      // Both folders are scratch space: this script compares and writes the committed report itself.
      apiReport: {
        enabled: true,
        reportFileName: '<unscopedPackageName>.api.md',
        reportFolder: join(temporary, name, 'report'),
        reportTempFolder: join(temporary, name, 'temp'),
      },
      docModel: { enabled: false },
      dtsRollup: { enabled: false },
      tsdocMetadata: { enabled: false },
      newlineKind: 'lf',
      messages: {
        compilerMessageReporting: { default: { logLevel: 'warning' } },
        extractorMessageReporting: {
          default: { logLevel: 'warning' },
          // Release tags (@public, @beta) are not used here; every export is public.
          'ae-missing-release-tag': { logLevel: 'none' },
          // Documentation is reviewed in the sources; the report guards the surface.
          'ae-undocumented': { logLevel: 'none' },
          // A type reachable from the API but not exported is listed in the report, where a reviewer sees it.
          'ae-forgotten-export': { logLevel: 'none', addToApiReportFile: true },
        },
        // JSDoc here is prose for readers, not TSDoc markup.
        tsdocMessageReporting: { default: { logLevel: 'none' } },
      },
    },
  })
}

/** Every `declare module '…' { … }` block in the package's declarations, comments and blank lines removed. */
function augmentations(dist) {
  const blocks = []
  const files = readdirSync(dist, { recursive: true })
    .filter((file) => String(file).endsWith('.d.ts'))
    .sort()
  for (const file of files) {
    const text = readFileSync(join(dist, file), 'utf8')
    for (const match of text.matchAll(/^declare module ['"][^'"]+['"] \{$/gm)) {
      // Declarations are emitted one member per line, so the block ends at the first `}` back at column 0.
      const end = text.indexOf('\n}', match.index)
      const block = text
        .slice(match.index, end + 2)
        .replace(/\/\*[\s\S]*?\*\//g, '')
        .split('\n')
        .filter((line) => line.trim() && !line.trim().startsWith('//'))
        .join('\n')
      blocks.push(`// ${file}\n${block}`)
    }
  }
  return blocks.length ? `\n## Module augmentations\n\n\`\`\`ts\n${blocks.join('\n\n')}\n\`\`\`\n` : ''
}

try {
  for (const name of REPORTED) {
    const config = configFor(name)
    const messages = []
    Extractor.invoke(config, {
      localBuild: true,
      messageCallback(message) {
        // Notes about the scratch report files; the committed report is compared below.
        const aboutScratch = String(message.messageId).startsWith('console-api-report')
        if (!aboutScratch && (message.logLevel === 'warning' || message.logLevel === 'error')) messages.push(message.formatMessageWithLocation(root))
        message.handled = true
      },
    })
    const report = relative(root, join(root, 'packages', name, `${name}.api.md`))
    for (const message of messages) problems.push(`${report}: ${message}`)
    const built = readFileSync(config.reportTempFilePath, 'utf8') + augmentations(join(root, 'packages', name, 'dist'))
    const committed = existsSync(report) ? readFileSync(report, 'utf8') : undefined
    if (built === committed) continue
    if (update) {
      writeFileSync(report, built)
      console.log(`updated ${report}`)
      continue
    }
    const builtPath = join(temporary, `${name}.api.md`)
    writeFileSync(builtPath, built)
    let difference = built
    if (committed !== undefined) {
      try {
        execFileSync('diff', ['-u', '--label', `${report} (committed)`, '--label', `${report} (built)`, report, builtPath], { encoding: 'utf8' })
      } catch (error) {
        difference = error.stdout ?? ''
      }
    }
    problems.push(`${report}: the public API of @cordage/${name} changed; run \`pnpm api:update\` and commit the report\n${difference}`)
  }
} finally {
  rmSync(temporary, { recursive: true, force: true })
}
if (problems.length) {
  console.error(`public API reports (CONTRIBUTING.md, "Public API"):\n${problems.join('\n')}`)
  process.exit(1)
}
