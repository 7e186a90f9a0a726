import { BlockList, isIP } from 'node:net'
import { ConfigError } from '@cordage/core'

// Every range a public web page never lives in: loopback, private, link-local (cloud metadata at
// 169.254.169.254 and fd00:ec2::254), carrier-grade NAT (Alibaba metadata at 100.100.100.200),
// documentation, benchmarking, multicast and reserved space. IPv4-mapped IPv6 addresses are matched
// against the IPv4 rules by BlockList itself; NAT64 and 6to4 prefixes embed arbitrary IPv4 addresses,
// so they are refused whole.
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
  ['64:ff9b::', 96, 'ipv6', 'NAT64'],
  ['64:ff9b:1::', 48, 'ipv6', 'NAT64'],
  ['100::', 64, 'ipv6', 'discard'],
  ['2001:db8::', 32, 'ipv6', 'documentation'],
  ['2002::', 16, 'ipv6', '6to4'],
  ['fc00::', 7, 'ipv6', 'unique-local (private)'],
  ['fe80::', 10, 'ipv6', 'link-local'],
  ['fec0::', 10, 'ipv6', 'site-local'],
  ['ff00::', 8, 'ipv6', 'multicast'],
]

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

  /** Why `address` (an IP literal) is refused, or undefined when it may be used. */
  refusal(address: string): string | undefined {
    const version = isIP(address)
    if (!version) return 'not an IP address'
    const type = version === 4 ? 'ipv4' : 'ipv6'
    if (this.allowed.check(address, type)) return undefined
    for (const [list, label] of this.blocked) if (list.check(address, type)) return label
    return undefined
  }
}
