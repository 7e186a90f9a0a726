/**
 * Compiles a glob to an anchored RegExp: `*` (any run without `/`), `**` (any run), `?` (one character
 * but `/`), `[abc]`, `[a-z]`, `[!abc]`, `{a,b}` (nestable) and `\` escapes. Throws on unbalanced brackets.
 */
export function globToRegExp(glob: string): RegExp {
  let source = ''
  let depth = 0
  for (let i = 0; i < glob.length; i++) {
    const char = glob[i]!
    if (char === '\\') {
      if (i + 1 >= glob.length) throw new Error('a trailing "\\" escapes nothing')
      source += escape(glob[++i]!)
    } else if (char === '*') {
      if (glob[i + 1] === '*') {
        source += '.*'
        i++
      } else source += '[^/]*'
    } else if (char === '?') source += '[^/]'
    else if (char === '[') {
      const end = glob.indexOf(']', i + 2)
      if (end < 0) throw new Error(`unclosed "[" at position ${i}`)
      let body = glob.slice(i + 1, end)
      const negate = body.startsWith('!') || body.startsWith('^')
      if (negate) body = body.slice(1)
      source += `[${negate ? '^' : ''}${body.replace(/[\\\]^]/g, '\\$&')}]`
      i = end
    } else if (char === '{') {
      depth++
      source += '(?:'
    } else if (char === '}' && depth > 0) {
      depth--
      source += ')'
    } else if (char === ',' && depth > 0) source += '|'
    else source += escape(char)
  }
  if (depth > 0) throw new Error('unclosed "{"')
  return new RegExp(`^${source}$`, 's')
}

function escape(char: string): string {
  return /[.*+?^${}()|[\]\\/-]/.test(char) ? `\\${char}` : char
}
