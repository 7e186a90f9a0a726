import { describe, expect, it } from 'vitest'
import { TOOL_NAME_PATTERN } from '@cordage/core'
import { registryNames } from '../src/names.js'

describe('registryNames', () => {
  it('prefixes, replaces invalid characters, and is independent of list order', () => {
    const tools = ['read file', 'dotted.name', 'dotted_name', 'ok']
    const names = registryNames('my server', tools)
    expect(Object.fromEntries(names)).toEqual({
      'read file': 'mcp__my_server__read_file',
      'dotted.name': 'mcp__my_server__dotted_name_4c738d92',
      dotted_name: 'mcp__my_server__dotted_name',
      ok: 'mcp__my_server__ok',
    })
    expect(registryNames('my server', [...tools].reverse())).toEqual(names)
  })

  it('gives every member of a collision without a valid original a hashed name', () => {
    const names = registryNames('s', ['a.b', 'a/b'])
    expect(names.get('a.b')).toMatch(/^mcp__s__a_b_[0-9a-f]{8}$/)
    expect(names.get('a/b')).toMatch(/^mcp__s__a_b_[0-9a-f]{8}$/)
    expect(names.get('a.b')).not.toBe(names.get('a/b'))
  })

  it('cuts names over 64 characters and keeps them distinct', () => {
    const long = 'x'.repeat(80)
    const names = registryNames('server', [long, `${long}y`, 'é'])
    for (const name of names.values()) expect(name).toMatch(TOOL_NAME_PATTERN)
    expect(names.get(long)).toHaveLength(64)
    expect(names.get(long)).not.toBe(names.get(`${long}y`))
    expect(names.get('é')).toBe('mcp__server___')
  })
})
