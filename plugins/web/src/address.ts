import { BlockList, isIP } from 'node:net'
import { ConfigError } from '@cordage/core'

// Every range a public web page never lives in: loopback, private, link-local (cloud metadata at
// 169.254.169.254 and fd00:ec2::254), carrier-grade NAT (Alibaba metadata at 100.100.100.200),
// documentation, benchmarking, multicast and reserved space. IPv4-mapped IPv6 addresses are matched
// against the IPv4 rules by BlockList itself. The other IPv6 forms that carry an IPv4 address (IPv4-
// compatible, IPv4-translated, NAT64, 6to4, Teredo) can reach it through a tunnel or translator, and
// none is needed to reach a public page, so they are refused whole; ISATAP identifiers, which sit under
// any prefix, are refused when the IPv4 address they carry is.
const BLOCKED: Array<[string, number, 'ipv4' | 'ipv6', string]> = [
  ['0.0.0.0', 8, 'ipv4', 'unspecified'],
  ['10.0.0.0', 8, 'ipv4', 'private'],
  ['100.64.0.0', 10, 'ipv4', 'shared (carrier-grade NAT)'],
  ['127.0.0.0', 8, 'ipv4', 'loopback'],
  ['169.254.0.0', 16, 'ipv4', 'link-local (cloud metadata)'],
  ['172.16.0.0', 12, 'ipv4', 'private'],
  ['192.0.0.0', 24, 'ipv4', 'reserved'],
  ['192.0.2.0', 24, 'ipv4', 'documentation'],
  ['192.168.0.0', 16, 'ipv4', 'private'],
  ['198.18.0.0', 15, 'ipv4', 'benchmarking'],
  ['198.51.100.0', 24, 'ipv4', 'documentation'],
  ['203.0.113.0', 24, 'ipv4', 'documentation'],
  ['224.0.0.0', 4, 'ipv4', 'multicast'],
  ['240.0.0.0', 4, 'ipv4', 'reserved'],
  ['::', 128, 'ipv6', 'unspecified'],
  ['::1', 128, 'ipv6', 'loopback'],
  ['::', 96, 'ipv6', 'IPv4-compatible'],
  ['::ffff:0:0:0', 96, 'ipv6', 'IPv4-translated'],
  ['64:ff9b::', 96, 'ipv6', 'NAT64'],
  ['64:ff9b:1::', 48, 'ipv6', 'NAT64'],
  ['100::', 64, 'ipv6', 'discard'],
  ['2001::', 32, 'ipv6', 'Teredo'],
  ['2001:db8::', 32, 'ipv6', 'documentation'],
  ['2002::', 16, 'ipv6', '6to4'],
  ['fc00::', 7, 'ipv6', 'unique-local (private)'],
  ['fe80::', 10, 'ipv6', 'link-local'],
  ['fec0::', 10, 'ipv6', 'site-local'],
  ['ff00::', 8, 'ipv6', 'multicast'],
]

/** The 16-bit groups of a colon-separated run (`a:b:c`). */
function parseGroups(run: string): number[] {
  return run ? run.split(':').map((group) => parseInt(group, 16)) : []
}

/** The eight 16-bit groups of an IPv6 address (`isIP` has accepted it). */
function groupsOf(address: string): number[] {
  let text = address.toLowerCase().split('%')[0]!
  // A trailing dotted quad stands for the last two groups.
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text)
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number]
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`
  }
  const [head = '', tail] = text.split('::')
  const front = parseGroups(head)
  const back = tail === undefined ? [] : parseGroups(tail)
  return [...front, ...Array<number>(8 - front.length - back.length).fill(0), ...back]
}

/** The IPv4 address in the last 32 bits of an IPv6 address. */
function lastIPv4(groups: number[]): string {
  const [high = 0, low = 0] = groups.slice(6)
  return `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`
}

/** The IPv4 address an IPv6 one carries, for a refusal's message (6to4 in bits 16–47, Teredo's client inverted in the last 32, the others last). */
function embeddedIPv4(groups: number[], label: string): string | undefined {
  if (label === '6to4') return lastIPv4([0, 0, 0, 0, 0, 0, groups[1]!, groups[2]!])
  if (label === 'Teredo') return lastIPv4([0, 0, 0, 0, 0, 0, groups[6]! ^ 0xffff, groups[7]! ^ 0xffff])
  if (label === 'IPv4-compatible' || label === 'IPv4-translated' || label === 'NAT64') return lastIPv4(groups)
  return undefined
}

/** Parses `a.b.c.d`, `a.b.c.d/n`, `::1` or `fe80::/10` into a subnet; throws a config error naming the entry. */
function parseCidr(entry: string, index: number): [string, number, 'ipv4' | 'ipv6'] {
  const [address = '', bits, ...rest] = entry.trim().split('/')
  const version = isIP(address)
  const max = version === 4 ? 32 : 128
  const prefix = bits === undefined ? max : Number(bits)
  if (!version || rest.length || !Number.isInteger(prefix) || prefix < 0 || prefix > max) {
    throw new ConfigError('web', [
      { path: `allowAddresses[${index}]`, message: `${JSON.stringify(entry)} is not an IP address or CIDR range (e.g. "127.0.0.1/32", "::1", "10.0.0.0/8")` },
    ])
  }
  return [address, prefix, version === 4 ? 'ipv4' : 'ipv6']
}

/** Decides which resolved addresses web_fetch may connect to. */
export class AddressPolicy {
  private readonly allowed = new BlockList()
  private readonly blocked: Array<[BlockList, string]> = []

  constructor(options: { blockPrivateAddresses: boolean; allowAddresses: readonly string[] }) {
    options.allowAddresses.forEach((entry, index) => this.allowed.addSubnet(...parseCidr(entry, index)))
    if (!options.blockPrivateAddresses) return
    for (const [network, prefix, type, label] of BLOCKED) {
      const list = new BlockList()
      list.addSubnet(network, prefix, type)
      this.blocked.push([list, label])
    }
  }

  /** What `address` (an IP literal) is when it is refused ("loopback address"), or undefined when it may be used. */
  refusal(address: string): string | undefined {
    const version = isIP(address)
    if (!version) return 'unparsable address'
    const type = version === 4 ? 'ipv4' : 'ipv6'
    if (this.allowed.check(address, type)) return undefined
    if (!this.blocked.length) return undefined
    const groups = version === 6 ? groupsOf(address) : []
    for (const [list, label] of this.blocked) {
      if (!list.check(address, type)) continue
      const embedded = version === 6 && embeddedIPv4(groups, label)
      return embedded ? `${label} address (it carries ${embedded})` : `${label} address`
    }
    // ISATAP: an interface identifier of 0000:5efe or 0200:5efe followed by an IPv4 address, under any prefix.
    if (version === 6 && (groups[4]! & 0xfdff) === 0 && groups[5] === 0x5efe) {
      const embedded = lastIPv4(groups)
      const reason = this.refusal(embedded)
      if (reason) return `ISATAP address (it carries ${embedded}, ${/^(?:[aeio]|un[^i])/i.test(reason) ? 'an' : 'a'} ${reason})`
    }
    return undefined
  }
}
