// Public API reports: `packages/<name>/<name>.api.md` for the packages third parties build on, made by
// API Extractor from the built declarations, followed by the package's `declare module` augmentations
// (the Context properties and events it adds), which API Extractor leaves out. `node
// scripts/api-report.mjs` fails when a package's public surface differs from its committed report
// (printing the difference); `--update` rewrites the reports. Run `pnpm build` first (`pnpm api:check`
// and `pnpm api:update` do). Usage: node scripts/api-report.mjs [--update] [root]
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { Extractor, ExtractorConfig } from '@microsoft/api-extractor'

/** The packages whose exports are a contract with code outside this repository. */
export const REPORTED = ['core', 'registry', 'services', 'testing', 'agent']

/** API Extractor's settings for `packages/<name>` under `rootDir`, with its scratch report under `scratch`. */
function configFor(rootDir, name, scratch) {
  const projectFolder = join(rootDir, 'packages', name)
  const entry = join(projectFolder, 'dist/index.d.ts')
  if (!existsSync(entry)) throw new Error(`${relative(rootDir, entry)} is missing: run \`pnpm build\` first`)
  mkdirSync(join(scratch, 'report'), { recursive: true })
  // The compiler settings the declarations were built with, for API Extractor's own compiler (which
  // reads only the entry point and what it reaches, so nothing is emitted or composed).
  const compilerOptions = {
    ...JSON.parse(readFileSync(join(rootDir, 'tsconfig.base.json'), 'utf8')).compilerOptions,
    composite: false,
    declaration: false,
    declarationMap: false,
    sourceMap: false,
  }
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
        reportFolder: join(scratch, 'report'),
        reportTempFolder: join(scratch, 'temp'),
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

/**
 * Compares (or with `update`, rewrites) the report of each of `packages` under `rootDir`. Returns the
 * problems, each naming its report: a changed surface (with the difference), or API Extractor's warnings.
 */
export function checkApiReports(rootDir, { update = false, packages = REPORTED } = {}) {
  const temporary = mkdtempSync(join(tmpdir(), 'cordage-api-'))
  const problems = []
  try {
    for (const name of packages) {
      const config = configFor(rootDir, name, join(temporary, name))
      const messages = []
      Extractor.invoke(config, {
        localBuild: true,
        messageCallback(message) {
          // Notes about the scratch report files; the committed report is compared below.
          const aboutScratch = String(message.messageId).startsWith('console-api-report')
          if (!aboutScratch && (message.logLevel === 'warning' || message.logLevel === 'error')) messages.push(message.formatMessageWithLocation(rootDir))
          message.handled = true
        },
      })
      const reportPath = join(rootDir, 'packages', name, `${name}.api.md`)
      const report = relative(rootDir, reportPath)
      for (const message of messages) problems.push(`${report}: ${message}`)
      const built = readFileSync(config.reportTempFilePath, 'utf8') + augmentations(join(rootDir, 'packages', name, 'dist'))
      const committed = existsSync(reportPath) ? readFileSync(reportPath, 'utf8') : undefined
      if (built === committed) continue
      if (update) {
        writeFileSync(reportPath, built)
        console.log(`updated ${report}`)
        continue
      }
      const builtPath = join(temporary, `${name}.api.md`)
      writeFileSync(builtPath, built)
      let difference = built
      if (committed !== undefined) {
        try {
          execFileSync('diff', ['-u', '--label', `${report} (committed)`, '--label', `${report} (built)`, reportPath, builtPath], { encoding: 'utf8' })
        } catch (error) {
          difference = error.stdout ?? ''
        }
      }
      problems.push(`${report}: the public API of ${config.packageJson?.name ?? name} changed; run \`pnpm api:update\` and commit the report\n${difference}`)
    }
  } finally {
    rmSync(temporary, { recursive: true, force: true })
  }
  return problems
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const rootDir = resolve(process.argv.slice(2).find((argument) => !argument.startsWith('--')) ?? '.')
  const problems = checkApiReports(rootDir, { update: process.argv.includes('--update') })
  if (problems.length) {
    console.error(`public API reports (CONTRIBUTING.md, "Public API"):\n${problems.join('\n')}`)
    process.exit(1)
  }
}
