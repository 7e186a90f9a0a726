/**
 * Compiles a glob to a RegExp over `/`-separated relative paths, with .gitignore-like anchoring: a pattern
 * without `/` matches the file name at any depth (`*.ts` = `**\/*.ts`); `./x` and `/x` anchor at the
 * search directory. Supports `*`, `?`, `**`, `[...]` (`[!...]` negates), `{a,b}` and `\` escapes.
 * Both search engines filter with it, so their results agree.
 */
export function compileGlob(pattern: string): RegExp {
  let source = pattern.replace(/^\.\//, '')
  if (source.startsWith('/')) source = source.slice(1)
  else if (!source.replace(/\/$/, '').includes('/')) source = `**/${source}`
  return new RegExp(`^${translate(source)}$`)
}

/** The file-name part of a glob that can only match by name (`*.ts`, or `*.ts` behind leading `**` segments), for ripgrep file types; undefined otherwise. */
export function nameGlob(pattern: string): string | undefined {
  const name = pattern.replace(/^(\*\*\/)+/, '')
  return name && !name.includes('/') && !name.includes('**') ? name : undefined
}

/** Whether a relative path has a hidden (dot) segment: never listed, as ripgrep and the fallback skip them. */
export function isHidden(path: string): boolean {
  return path.startsWith('.') || path.includes('/.')
}

function translate(glob: string): string {
  let out = ''
  let braces = 0
  for (let index = 0; index < glob.length; index++) {
    const char = glob[index]!
    if (char === '\\' && index + 1 < glob.length) {
      out += escape(glob[++index]!)
    } else if (char === '*') {
      if (glob[index + 1] === '*') {
        const atStart = index === 0 || glob[index - 1] === '/'
        const next = glob[index + 2]
        index++
        if (atStart && next === '/') {
          out += '(?:[^/]*/)*'
          index++
        } else if (atStart && next === undefined) out += '.*'
        else out += '[^/]*'
      } else out += '[^/]*'
    } else if (char === '?') out += '[^/]'
    else if (char === '[') {
      const end = glob.indexOf(']', index + 2)
      if (end === -1) out += '\\['
      else {
        let body = glob.slice(index + 1, end)
        if (body.startsWith('!')) body = `^${body.slice(1)}`
        out += `[${body.replace(/\\/g, '\\\\')}]`
        index = end
      }
    } else if (char === '{') {
      braces++
      out += '(?:'
    } else if (char === ',' && braces > 0) out += '|'
    else if (char === '}' && braces > 0) {
      braces--
      out += ')'
    } else out += escape(char)
  }
  return out + ')'.repeat(braces)
}

function escape(char: string): string {
  return /[.*+?^${}()|[\]\\/]/.test(char) ? `\\${char}` : char
}
