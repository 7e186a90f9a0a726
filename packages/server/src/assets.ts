import type { Context as HonoContext } from 'hono'

/** One file of the studio. */
export interface StudioAsset {
  contentType: string
  body: string | Uint8Array
}

/** The studio's files by name: `index.html` is served at `/`, every other name at `/studio/<name>`. */
export type StudioAssets = Readonly<Record<string, StudioAsset>>

/** Answers with asset `name`, or a JSON 404. */
export function serveAsset(c: HonoContext, assets: StudioAssets, name: string): Response {
  const asset = Object.hasOwn(assets, name) ? assets[name] : undefined
  if (!asset) return c.json({ error: { code: 'NOT_FOUND', message: `no studio file ${JSON.stringify(name)}` } }, 404)
  c.header('Content-Type', asset.contentType)
  c.header('X-Content-Type-Options', 'nosniff')
  // No other page may frame the studio and steer a click onto Allow (a meta CSP cannot say this).
  c.header('Content-Security-Policy', "frame-ancestors 'none'")
  c.header('X-Frame-Options', 'DENY')
  c.header('Cache-Control', 'no-cache')
  return c.body(typeof asset.body === 'string' ? asset.body : new Uint8Array(asset.body))
}

/** The page `GET /` serves when no studio is installed: where the API is and how to call it. */
export function placeholderPage(): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Cordage</title></head>
<body>
<h1>Cordage</h1>
<p>The studio is not installed on this server. The API is at <a href="/api/sessions">/api/sessions</a>; its OpenAPI document is <a href="/api/openapi.json">/api/openapi.json</a>.</p>
</body></html>
`
}
