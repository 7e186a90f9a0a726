import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { chromium, type BrowserContext, type Locator } from 'playwright-core'

/** Debian's Chromium (`scripts/services.sh start` installs it); never a downloaded browser. */
export const CHROMIUM = process.env.CORDAGE_CHROMIUM ?? '/usr/bin/chromium'

/** Why the browser tests are skipped, or undefined when they can run. */
export const skipReason = existsSync(CHROMIUM) ? undefined : `no Chromium at ${CHROMIUM}: run \`bash scripts/services.sh start\` (installs Debian's chromium)`

/** Where tests leave screenshots (gitignored). */
export const ARTIFACTS = fileURLToPath(new URL('../../../.artifacts/studio/', import.meta.url))

const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
]

/** A headless Chromium with a fresh profile in a temp directory; `close` ends it and removes the profile. */
export async function launch(): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  const profile = mkdtempSync(join(tmpdir(), 'cordage-chromium-'))
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ARGS,
    viewport: { width: 1200, height: 900 },
    timeout: 60_000,
  })
  return {
    context,
    async close() {
      await context.close()
      rmSync(profile, { recursive: true, force: true })
    },
  }
}

/** The path of screenshot `name` in the artifacts folder (created). */
export function artifact(name: string): string {
  mkdirSync(ARTIFACTS, { recursive: true })
  return join(ARTIFACTS, name)
}

/**
 * The left edge, on screen, of each character of the first occurrence of `word` in `locator`'s text: in
 * increasing order exactly when the word is laid out in the order it is stored.
 */
export function characterLefts(locator: Locator, word: string): Promise<number[]> {
  return locator.evaluate((element, word) => {
    // The test files have no DOM types: the document is reached through the element.
    const document = element.ownerDocument
    const walker = document.createTreeWalker(element, 4 /* NodeFilter.SHOW_TEXT */)
    for (let text = walker.nextNode(); text; text = walker.nextNode()) {
      const at: number = text.data.indexOf(word)
      if (at < 0) continue
      return [...word].map((_, index) => {
        const range = document.createRange()
        range.setStart(text, at + index)
        range.setEnd(text, at + index + 1)
        return range.getBoundingClientRect().left as number
      })
    }
    throw new Error(`no text ${JSON.stringify(word)}`)
  }, word)
}

/** Format characters (direction overrides, zero-width and other invisible characters) in `text`, but the joiners of emoji and scripts. */
export function formatCharacters(text: string): string[] {
  return [...text.matchAll(/[\p{Cf}]/gu)].map((match) => match[0]).filter((char) => char !== '\u200c' && char !== '\u200d')
}
