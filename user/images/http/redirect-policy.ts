/**
 * Which redirects a download may follow. A server on the internet must not be able to send
 * Sluice to this computer or to the user's local network (a router's admin page, a NAS, a service
 * listening on 127.0.0.1) and have what it answers written to a drive, nor turn an https download
 * into plain http that anyone on the way can change. An address the user typed is theirs to
 * choose: images served on the LAN are common, and a redirect between two local hosts is allowed.
 */
import { BlockList, isIP } from 'node:net';

/** Why an address is not on the public internet. */
export type AddressScope = 'loopback' | 'link-local' | 'private';

function blockList(ranges: readonly [string, number][]): BlockList {
  const list = new BlockList();
  for (const [network, prefix] of ranges) list.addSubnet(network, prefix, isIP(network) === 6 ? 'ipv6' : 'ipv4');
  return list;
}

/**
 * The ranges of each scope. BlockList checks an IPv4-mapped IPv6 address (::ffff:127.0.0.1, as a
 * dual-stack socket reports it) against the IPv4 ranges too.
 */
const SCOPES: readonly [AddressScope, BlockList][] = [
  [
    'loopback',
    blockList([
      ['127.0.0.0', 8],
      // "This network": a connection to 0.0.0.0 reaches this computer on Linux and macOS.
      ['0.0.0.0', 8],
      // ::1, the unspecified ::, and the deprecated IPv4-compatible ::a.b.c.d.
      ['::', 96],
    ]),
  ],
  [
    'link-local',
    blockList([
      ['169.254.0.0', 16],
      ['fe80::', 10],
    ]),
  ],
  [
    'private',
    blockList([
      ['10.0.0.0', 8],
      ['172.16.0.0', 12],
      ['192.168.0.0', 16],
      // Carrier-grade NAT: the provider's side of the user's own network.
      ['100.64.0.0', 10],
      ['fc00::', 7],
      // Site-local, deprecated but still routed by some networks.
      ['fec0::', 10],
    ]),
  ],
];

/** The scope of `address` (an IPv4 or IPv6 address, without brackets); null when it is public. */
export function addressScope(address: string): AddressScope | null {
  const family = isIP(address);
  if (family === 0) throw new Error(`not an IP address: ${address}`);
  const type = family === 6 ? 'ipv6' : 'ipv4';
  return SCOPES.find(([, list]) => list.check(address, type))?.[0] ?? null;
}

const SCOPE_WORDS: Record<AddressScope, string> = {
  loopback: 'this computer itself',
  'link-local': 'a link-local address (a device on the local network segment)',
  private: 'a private address (a device on a local network)',
};

/**
 * The first of `addresses` that is not on the public internet, with what it is ("10.0.0.1, a
 * private address (…)"); null when none is.
 */
export function localAddress(addresses: readonly string[]): string | null {
  for (const address of addresses) {
    const scope = addressScope(address);
    if (scope !== null) return `${address}, ${SCOPE_WORDS[scope]}`;
  }
  return null;
}

/** One step of a redirect chain: the page that redirected, and where it sends the download. */
export interface RedirectStep {
  from: URL;
  /** The address the redirecting server answered from; null when the socket did not say (taken as public). */
  fromAddress: string | null;
  to: URL;
  /** Every address the target's host name resolves to (the connection may use any of them). */
  toAddresses: readonly string[];
}

/** Why the redirect may not be followed, as a sentence; null when it may. */
export function redirectRefusal(step: RedirectStep): string | null {
  const { from, to } = step;
  if (to.protocol !== 'http:' && to.protocol !== 'https:')
    return `${from.href} redirects to ${to.href}, which is not an http(s) address.`;
  if (from.protocol === 'https:' && to.protocol === 'http:') {
    return `${from.href} redirects to ${to.href}: from a secure (https) address to an insecure (http) one, where anyone on the way could change the image. Sluice does not follow it; use an https address for the image.`;
  }
  if (step.fromAddress !== null && addressScope(step.fromAddress) !== null) return null;
  for (const address of step.toAddresses) {
    const scope = addressScope(address);
    if (scope !== null) {
      return `${from.href} (a server on the internet) redirects to ${to.href}, which is ${address}: ${SCOPE_WORDS[scope]}. Sluice does not follow a redirect from the internet into the local network; if you meant to download from there, type that address yourself.`;
    }
  }
  return null;
}
