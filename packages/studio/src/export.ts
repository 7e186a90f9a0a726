import type { StoredSession } from '@cordage/services'
import { assetText } from './assets.js'

// Nothing can load from anywhere: the file opens from disk and shows only what it holds.
const POLICY = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"

/**
 * JSON that is safe inside a `<script>` element: `<`, `>` and `&` are written as `\u003c` etc., so a
 * `</script>` or `<!--` in a tool's output cannot end the element, and U+2028/U+2029 are escaped too.
 */
export function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`)
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`)
}

/** Asset text inlined into a `<style>` or `<script>`: it must not be able to close its element. */
function inlined(name: string, element: 'style' | 'script'): string {
  const text = assetText(name)
  if (text.toLowerCase().includes(`</${element}`)) throw new Error(`studio asset ${name} contains </${element}> and cannot be inlined`)
  return text
}

/**
 * One self-contained HTML file showing `session` (and its `children`, the sessions of subagents and
 * workflow agents it started, at any depth) with the live page's view: styles, script and data inline,
 * no external URL, opens from disk.
 */
export function renderSessionHtml(session: StoredSession, children: readonly StoredSession[] = []): string {
  const data = scriptJson({ session, children })
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="${POLICY}">
<meta name="generator" content="cordage replay --html">
<title>Cordage session ${escapeHtml(session.header.id)}</title>
<style>
${inlined('studio.css', 'style')}
</style>
</head>
<body>
<main id="app" class="export"></main>
<script type="application/json" id="cordage-session">${data}</script>
<script>
${inlined('view-parts.js', 'script')}
</script>
<script>
${inlined('render.js', 'script')}
</script>
<script>
${inlined('export.js', 'script')}
</script>
</body>
</html>
`
}
