/**
 * The servers of a `NATS_URL`: one URL, or a comma-separated list for a
 * cluster (`nats://a:4222,nats://b:4222`), spaces around the commas allowed.
 * Every connection this repository makes reads the setting through here, so
 * no tool takes one server where the apps take a list.
 */
export function natsServers(url: string): string[] {
  const servers = url
    .split(',')
    .map((server) => server.trim())
    .filter((server) => server !== '');
  if (servers.length === 0) throw new Error('NATS_URL names no server');
  return servers;
}
