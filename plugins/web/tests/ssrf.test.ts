import { describe, expect, it } from 'vitest'
import { codeOf, loadWeb, serve, textOf, valueOf } from './helpers.js'

describe('web_fetch SSRF protection', () => {
  it('refuses a loopback server by default and never connects to it', async () => {
    const target = await serve((_request, response) => response.end('secret'), '127.0.0.1')
    const { call } = await loadWeb({ allowAddresses: [] })
    const result = await call('web_fetch', { url: `${target.url}/admin` })
    expect(codeOf(result)).toBe('WEB_BLOCKED_ADDRESS')
    expect(textOf(result)).toContain('127.0.0.1 is a loopback address')
    expect(target.requests).toHaveLength(0)
  })

  it.each([
    ['a name resolved by DNS', (port: number) => `http://localhost:${port}/`],
    ['a decimal IPv4 literal', (port: number) => `http://2130706433:${port}/`],
    ['an IPv4-mapped IPv6 literal', (port: number) => `http://[::ffff:127.0.0.1]:${port}/`],
    ['a shortened octal-ish literal', (port: number) => `http://0x7f.1:${port}/`],
    ['an IPv4-compatible IPv6 literal', (port: number) => `http://[::127.0.0.1]:${port}/`],
    ['an IPv4-translated IPv6 literal', (port: number) => `http://[::ffff:0:127.0.0.1]:${port}/`],
  ])('refuses loopback reached through %s', async (_label, url) => {
    const target = await serve((_request, response) => response.end('secret'), '127.0.0.1')
    const { call } = await loadWeb({ allowAddresses: [] })
    const result = await call('web_fetch', { url: url(target.port) })
    expect(codeOf(result)).toBe('WEB_BLOCKED_ADDRESS')
    expect(target.requests).toHaveLength(0)
  })

  it('names the resolved address when a host name resolves to a blocked one', async () => {
    const { call } = await loadWeb({ allowAddresses: [] })
    const result = await call('web_fetch', { url: 'http://localhost:9/' })
    expect(textOf(result)).toMatch(/localhost \(it resolves to (127\.0\.0\.1|::1)[^)]*\) is a loopback address/)
  })

  it.each([
    ['10.x', 'http://10.1.2.3/x', 'private'],
    ['cloud metadata', 'http://169.254.169.254/latest/meta-data/', 'link-local (cloud metadata)'],
    ['IPv6 loopback', 'http://[::1]:1/', 'loopback'],
    ['IPv6 unique-local', 'http://[fd00:ec2::254]/', 'unique-local (private)'],
    ['carrier-grade NAT metadata', 'http://100.100.100.200/', 'shared (carrier-grade NAT)'],
  ])('refuses %s addresses', async (_label, url, reason) => {
    const { call } = await loadWeb({ allowAddresses: [] })
    const result = await call('web_fetch', { url })
    expect(codeOf(result)).toBe('WEB_BLOCKED_ADDRESS')
    expect(textOf(result)).toContain(`is a ${reason} address`)
  })

  it.each([
    ['IPv4-compatible', 'http://[::10.0.0.7]/', '::a00:7 is an IPv4-compatible address (it carries 10.0.0.7)'],
    ['IPv4-compatible metadata', 'http://[::169.254.169.254]/', '::a9fe:a9fe is an IPv4-compatible address (it carries 169.254.169.254)'],
    ['IPv4-translated', 'http://[::ffff:0:192.168.1.1]/', '::ffff:0:c0a8:101 is an IPv4-translated address (it carries 192.168.1.1)'],
    ['NAT64', 'http://[64:ff9b::10.0.0.1]/', '64:ff9b::a00:1 is a NAT64 address (it carries 10.0.0.1)'],
    ['6to4', 'http://[2002:a9fe:a9fe::1]/', '2002:a9fe:a9fe::1 is a 6to4 address (it carries 169.254.169.254)'],
    ['Teredo', 'http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/', 'is a Teredo address (it carries 127.0.0.1)'],
    ['ISATAP', 'http://[2600::5efe:10.1.2.3]/', '2600::5efe:a01:203 is an ISATAP address (it carries 10.1.2.3, a private address)'],
  ])('refuses the IPv6 form %s, naming the IPv4 address it carries', async (_label, url, message) => {
    const { call } = await loadWeb({ allowAddresses: [] })
    const result = await call('web_fetch', { url })
    expect(codeOf(result)).toBe('WEB_BLOCKED_ADDRESS')
    expect(textOf(result)).toContain(message)
  })

  it('refuses at the hop a redirect chain from an allowed host into private addresses', async () => {
    const inner = await serve((_request, response) => response.end('internal'), '127.0.0.1')
    const inner6 = await serve((_request, response) => response.end('internal6'), '::1')
    for (const target of [`${inner.url}/x`, `${inner6.url}/y`, 'http://10.0.0.7/', 'http://169.254.169.254/latest/meta-data/iam']) {
      const edge = await serve((request, response) => {
        // Two allowed hops first, then the jump into the private address.
        const step = Number(new URL(request.url!, 'http://h').searchParams.get('step') ?? 0)
        response.writeHead(302, { location: step < 2 ? `/?step=${step + 1}` : target }).end()
      })
      const { call } = await loadWeb()
      const result = await call('web_fetch', { url: `${edge.url}/?step=0` })
      expect(codeOf(result), target).toBe('WEB_BLOCKED_ADDRESS')
      expect(edge.requests).toHaveLength(3)
    }
    expect(inner.requests).toHaveLength(0)
    expect(inner6.requests).toHaveLength(0)
  })

  it('reaches loopback only through the configured allow list', async () => {
    const target = await serve((_request, response) => response.end('hello'), '127.0.0.1')
    const { call } = await loadWeb({ allowAddresses: ['127.0.0.0/30'] })
    expect(valueOf(await call('web_fetch', { url: target.url })).content).toBe('hello')
  })

  it('can be switched off entirely', async () => {
    const target = await serve((_request, response) => response.end('hello'), '127.0.0.1')
    const { call } = await loadWeb({ allowAddresses: [], blockPrivateAddresses: false })
    expect(valueOf(await call('web_fetch', { url: target.url })).content).toBe('hello')
  })

  it.each([['not-an-ip'], ['10.0.0.0/33'], ['::1/129'], ['1.2.3.4/8/1']])('rejects the allow list entry %s at load', async (entry) => {
    await expect(loadWeb({ allowAddresses: [entry] }, { print: false })).rejects.toMatchObject({
      code: 'INVALID_CONFIG',
      message: expect.stringContaining(JSON.stringify(entry)),
    })
  })

  it('refuses URLs with credentials and non-http schemes before any connection', async () => {
    const { call } = await loadWeb()
    expect(codeOf(await call('web_fetch', { url: 'http://user:pass@127.0.0.2/' }))).toBe('WEB_BLOCKED_URL')
    expect(codeOf(await call('web_fetch', { url: 'file:///etc/passwd' }))).toBe('WEB_INVALID_URL')
    expect(codeOf(await call('web_fetch', { url: 'ftp://example.com/x' }))).toBe('WEB_INVALID_URL')
    expect(codeOf(await call('web_fetch', { url: 'not a url' }))).toBe('WEB_INVALID_URL')
    expect(codeOf(await call('web_fetch', { url: `http://example.com/${'a'.repeat(3000)}` }))).toBe('WEB_INVALID_URL')
  })

  it('refuses a redirect to a non-http scheme', async () => {
    const edge = await serve((_request, response) => response.writeHead(301, { location: 'file:///etc/passwd' }).end())
    const { call } = await loadWeb()
    const result = await call('web_fetch', { url: edge.url })
    expect(codeOf(result)).toBe('WEB_INVALID_URL')
  })
})
