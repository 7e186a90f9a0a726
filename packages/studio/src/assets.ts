import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

/** One file of the studio: its `Content-Type` and its bytes (text for the text files). */
export interface StudioAsset {
  contentType: string
  body: string | Uint8Array
}

/** The files shipped in the package's `assets/` folder, served under `/studio/`. */
export const ASSET_FILES: Readonly<Record<string, string>> = {
  'index.html': 'text/html; charset=utf-8',
  'studio.css': 'text/css; charset=utf-8',
  'view-parts.js': 'text/javascript; charset=utf-8',
  'render.js': 'text/javascript; charset=utf-8',
  'api.js': 'text/javascript; charset=utf-8',
  'prompts.js': 'text/javascript; charset=utf-8',
  'app.js': 'text/javascript; charset=utf-8',
  'export.js': 'text/javascript; charset=utf-8',
}

// `assets/` sits beside `src/` and `dist/`, so the same path works from the sources and the build.
const ASSET_DIR = fileURLToPath(new URL('../assets/', import.meta.url))

let cache: Map<string, string> | undefined

/** The text of asset `name`, read once per process. */
export function assetText(name: string): string {
  cache ??= new Map(Object.keys(ASSET_FILES).map((file) => [file, readFileSync(ASSET_DIR + file, 'utf8')]))
  const text = cache.get(name)
  if (text === undefined) throw new Error(`@cordage/studio has no asset ${JSON.stringify(name)}`)
  return text
}

/**
 * The studio's files by name, in the shape `startServer({ assets })` of `@cordage/server` takes: it serves
 * `index.html` at `/` and every file at `/studio/<name>`. A fresh object per call; the bodies are read from
 * the package once.
 */
export function studioAssets(): Record<string, StudioAsset> {
  const assets: Record<string, StudioAsset> = {}
  for (const [name, contentType] of Object.entries(ASSET_FILES)) assets[name] = { contentType, body: assetText(name) }
  return assets
}
