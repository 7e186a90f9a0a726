import { describe, expect, it } from 'vitest'
import { DEFAULT_ENV_DENY, envFilter } from '../src/env.js'

describe('envFilter', () => {
  const source = { PATH: '/bin', OPENAI_API_KEY: 'k', github_token: 't', AWS_REGION: 'eu', HOME: '/h', EMPTY: undefined }

  it('withholds credentials by default, case-insensitively, and drops undefined values', () => {
    expect(envFilter({ allow: ['*'], deny: [...DEFAULT_ENV_DENY], set: {} })(source)).toEqual({ PATH: '/bin', HOME: '/h' })
  })

  it('lets an exact allow name through a deny pattern and applies set last', () => {
    const filter = envFilter({ allow: ['PATH', 'GITHUB_TOKEN'], deny: [...DEFAULT_ENV_DENY], set: { PATH: '/usr/bin' } })
    expect(filter(source)).toEqual({ PATH: '/usr/bin', github_token: 't' })
  })
})
